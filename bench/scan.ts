/**
 * Description-scan benchmark: precision, recall, false-quarantine rate and scan time per
 * description (mean, p99) on the train split, the held-out split and — when its file exists —
 * the test split (test/fixtures/scan-corpus/test.json, written apart from the rules and never
 * tuned on; this script only counts it). Then scan time for tool results the size they come in
 * (1 KB and 100 KB of JSON and of prose, 100 KB of numbers), with the prefilter and, as the
 * baseline measured in the same run, without it. The last line printed is one JSON object;
 * a split whose file is absent is `null`.
 *
 *   npm run bench:scan   (ROUNDS=5 by default: the first rounds warm the JIT, the last is timed)
 */
import { performance } from 'node:perf_hooks';
import { scanModelText } from '../src/domain/catalog/description-scan.js';
import { evaluate, loadSplit } from './scan-corpus.js';

const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 5));

const train = loadSplit('train.json');
if (!train) throw new Error('test/fixtures/scan-corpus/train.json is missing');
const heldout = loadSplit('heldout.json');
const testSplit = loadSplit('test.json');

const figures = {
  train: evaluate(train, ROUNDS),
  heldout: heldout ? evaluate(heldout, ROUNDS) : null,
  test: testSplit ? evaluate(testSplit, ROUNDS) : null,
};

for (const [split, f] of Object.entries(figures)) {
  if (!f) {
    console.log(`${split}: (no split file)`);
    continue;
  }
  console.log(
    `${split}: ${f.poisoned} poisoned, ${f.clean} clean — precision ${f.precision}, recall ${f.recall}, false quarantine ${f.falseQuarantine}; scan ${f.scanMsMean} ms mean, ${f.scanMsP99} ms p99`,
  );
  // The test split is reported by count only: its entries are not for reading here.
  if (split === 'test') continue;
  if (f.missed.length > 0) console.log(`  missed: ${f.missed.join(', ')}`);
  if (f.falselyQuarantined.length > 0)
    console.log(`  falsely quarantined: ${f.falselyQuarantined.join(', ')}`);
}

// --- Tool results: plain data as most results are, and prose.

function jsonRows(bytes: number): string {
  const rows: unknown[] = [];
  for (let i = 0; JSON.stringify(rows).length < bytes; i++) {
    rows.push({
      id: i,
      name: `Customer ${i}`,
      email: `user${i}@example.com`,
      city: ['Berlin', 'Lyon', 'Porto'][i % 3],
      balance: i * 3.5,
      active: i % 2 === 0,
      created: '2026-01-02T03:04:05Z',
      note: 'Paid on time; prefers email contact.',
    });
  }
  return JSON.stringify(rows);
}

function prose(bytes: number): string {
  const lines: string[] = [];
  for (let i = 0; lines.join('\n').length < bytes; i++) {
    lines.push(
      `Item ${i}: the quarterly report shows revenue grew by ${i % 9}% while costs stayed flat; the team closed ${i * 7} issues.`,
    );
  }
  return lines.join('\n');
}

const RESULTS: Readonly<Record<string, string>> = {
  json1k: jsonRows(1_024),
  json100k: jsonRows(100_000),
  prose1k: prose(1_024),
  prose100k: prose(100_000),
  numbers100k: Array.from({ length: 14_000 }, (_, i) => (i * 1.25).toFixed(2)).join(','),
};

/** Fastest of `ROUNDS + 2` scans, so a pause of a shared machine is not read as the cost. */
function bestMs(text: string, prefilter: boolean): number {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < ROUNDS + 2; r++) {
    const started = performance.now();
    scanModelText({ text, field: '/result', prefilter });
    best = Math.min(best, performance.now() - started);
  }
  return Math.round(best * 1000) / 1000;
}

const results: Record<string, { bytes: number; ms: number; baselineMs: number }> = {};
for (const [label, text] of Object.entries(RESULTS)) {
  results[label] = { bytes: text.length, ms: bestMs(text, true), baselineMs: bestMs(text, false) };
  const r = results[label];
  console.log(
    `result ${label} (${r?.bytes} B): ${r?.ms} ms (without prefilter ${r?.baselineMs} ms)`,
  );
}

console.log(JSON.stringify({ bench: 'scan', rounds: ROUNDS, ...figures, results }));
