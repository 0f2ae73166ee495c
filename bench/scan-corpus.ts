/**
 * @module The description-scan corpus format and its figures: precision, recall and false
 * quarantine of the scanner over a labelled split, and scan time per description. Shared by
 * `npm run bench:scan` and test/catalog/scan-corpus.test.ts so both count the same way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type ScanFinding, scanToolText } from '../src/domain/catalog/tool-text-scan.js';

export interface CorpusEntry {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly label: 'poisoned' | 'clean';
  /** The attack (or near-miss) shape the entry was written for. */
  readonly shape: string;
  /** BCP 47 language of the description. */
  readonly lang: string;
  /** Documentation hosts the tool's owner declares. */
  readonly docHosts?: readonly string[];
}

export interface SplitFigures {
  readonly poisoned: number;
  readonly clean: number;
  /** Quarantined poisoned entries over all quarantined entries. */
  readonly precision: number;
  /** Quarantined poisoned entries over all poisoned entries. */
  readonly recall: number;
  /** Quarantined clean entries over all clean entries. */
  readonly falseQuarantine: number;
  readonly scanMsMean: number;
  readonly scanMsP99: number;
  /** Ids of poisoned entries that passed, and of clean entries that were quarantined. */
  readonly missed: readonly string[];
  readonly falselyQuarantined: readonly string[];
}

export const CORPUS_DIR = new URL('../test/fixtures/scan-corpus/', import.meta.url);

/** The split's entries, or null when its file does not exist. */
export function loadSplit(file: string): CorpusEntry[] | null {
  const url = new URL(file, CORPUS_DIR);
  if (!existsSync(url)) return null;
  return JSON.parse(readFileSync(url, 'utf8')) as CorpusEntry[];
}

/** The scan registration runs on a description (no catalog: the verdict never depends on one). */
export function scanEntry(entry: CorpusEntry): ScanFinding[] {
  return scanToolText({
    name: entry.name,
    description: entry.description,
    ...(entry.docHosts ? { docHosts: entry.docHosts } : {}),
  });
}

function round(n: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Scans every entry `rounds` times (timing the last round) and counts verdicts. */
export function evaluate(entries: readonly CorpusEntry[], rounds = 1): SplitFigures {
  const times: number[] = [];
  const missed: string[] = [];
  const falselyQuarantined: string[] = [];
  let truePositive = 0;
  let falsePositive = 0;
  for (let r = 0; r < rounds; r++) {
    const last = r === rounds - 1;
    for (const entry of entries) {
      const started = performance.now();
      const quarantined = scanEntry(entry).length > 0;
      const took = performance.now() - started;
      if (!last) continue;
      times.push(took);
      if (entry.label === 'poisoned') {
        if (quarantined) truePositive++;
        else missed.push(entry.id);
      } else if (quarantined) {
        falsePositive++;
        falselyQuarantined.push(entry.id);
      }
    }
  }
  const poisoned = entries.filter((e) => e.label === 'poisoned').length;
  const clean = entries.length - poisoned;
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / Math.max(1, times.length);
  const p99 = times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] ?? 0;
  return {
    poisoned,
    clean,
    precision: round(truePositive / Math.max(1, truePositive + falsePositive)),
    recall: round(truePositive / Math.max(1, poisoned)),
    falseQuarantine: round(falsePositive / Math.max(1, clean)),
    scanMsMean: round(mean, 3),
    scanMsP99: round(p99, 3),
    missed,
    falselyQuarantined,
  };
}
