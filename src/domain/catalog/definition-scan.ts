/**
 * @module The poisoning scan of one tool definition (C3): its name, description, id and every
 * schema text a model reads, against the tool's own hosts (tool-text-scan.ts). A bulk apply may
 * scan its definitions beforehand on worker threads (scan-pool.ts); registration then takes that
 * verdict for the very object it was computed for, and scans here otherwise. Either way it is
 * this module's function on the same input: docs/architecture.md §8, C3, "Bulk registration".
 */
import type { ScanInput } from './description-scan.js';
import { scanInParallel } from './scan-pool.js';
import { schemaModelTexts } from './schema-model-texts.js';
import type { ToolDefinition } from './tool-definition.js';
import { type ScanFinding, scanToolText } from './tool-text-scan.js';

/** Hosts a definition reaches anyway: its egress allow-list and its http runtime's host. */
function ownHostsOf(definition: ToolDefinition): string[] {
  const hosts = definition.egress.mode === 'constrained' ? [...definition.egress.hosts] : [];
  if (definition.runtime.kind === 'http') {
    try {
      hosts.push(new URL(definition.runtime.base_url).hostname);
    } catch {
      // Registration refuses a base_url that does not parse; nothing to add.
    }
  }
  return hosts;
}

/** What the scan reads of a definition: plain data, the same on a worker thread. */
export function scanInputOf(definition: ToolDefinition): ScanInput {
  return {
    name: definition.name,
    description: definition.description,
    // Every string and key an export sends to a model, not only descriptions and titles.
    extraTexts: [
      // Exports name a tool by its id where two share a name.
      { field: '/id', text: definition.id, kind: 'key' },
      ...schemaModelTexts(definition.input_schema, '/input_schema'),
      ...schemaModelTexts(definition.output_schema, '/output_schema'),
    ],
    ownHosts: ownHostsOf(definition),
    ...(definition.doc_hosts ? { docHosts: definition.doc_hosts } : {}),
  };
}

/**
 * Verdicts being computed beforehand, keyed by the definition object itself (checked definitions
 * are frozen: what is scanned is what registers). Taken once; anything not in it, or that a
 * worker could not scan, is scanned here.
 */
const prescanned = new WeakMap<ToolDefinition, Promise<ScanFinding[] | null>>();

/** The definition's findings: the verdict computed beforehand for this object, or a scan now. */
export async function scanDefinition(definition: ToolDefinition): Promise<ScanFinding[]> {
  const pending = prescanned.get(definition);
  if (pending) {
    prescanned.delete(definition);
    const ready = await pending;
    if (ready) return ready;
  }
  return scanToolText(scanInputOf(definition));
}

/**
 * Starts scanning many definitions on worker threads for a bulk registration, so the transaction
 * does not spend its time on regular expressions one core at a time: it registers the first while
 * the workers scan the rest. Does nothing for a few (a worker costs more than it saves) or on one
 * core.
 */
export function prescanDefinitions(
  definitions: readonly ToolDefinition[],
  options: { readonly minimum?: number } = {},
): void {
  const verdicts = scanInParallel(
    definitions.map((d) => scanInputOf(d)),
    options,
  );
  definitions.forEach((definition, i) => {
    const verdict = verdicts[i];
    if (verdict) prescanned.set(definition, verdict);
  });
}
