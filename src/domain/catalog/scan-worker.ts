/**
 * @module A scan worker (docs/architecture.md §8, C3, "Bulk registration"): for each batch of scan
 * inputs it is sent, the findings of each, computed by tool-text-scan.ts exactly as registration
 * would. It reads and writes nothing else and decides nothing: registration takes the verdicts.
 */
import { parentPort } from 'node:worker_threads';
import type { ScanInput } from './description-scan.js';
import { type ScanFinding, scanToolText } from './tool-text-scan.js';

interface ScanTask {
  readonly id: number;
  readonly inputs: readonly ScanInput[];
}

const port = parentPort;
if (port) {
  port.on('message', (task: ScanTask) => {
    let findings: ScanFinding[][] | null = null;
    try {
      findings = task.inputs.map((input) => scanToolText(input));
    } catch {
      // The batch is scanned again at registration, where any error is the registration's.
    }
    port.postMessage({ id: task.id, findings });
  });
}
