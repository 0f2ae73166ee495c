/**
 * Description-scan benchmark: precision, recall, false-quarantine rate and scan time per
 * description (mean, p99) on the train split and, when its file exists, on the held-out split
 * (test/fixtures/scan-corpus/heldout.json), which the rules were not tuned on. The last line
 * printed is one JSON object; `"heldout": null` when that split is absent.
 *
 *   npm run bench:scan   (ROUNDS=5 by default: the first rounds warm the JIT, the last is timed)
 */
import { evaluate, loadSplit } from './scan-corpus.js';

const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 5));

const train = loadSplit('train.json');
if (!train) throw new Error('test/fixtures/scan-corpus/train.json is missing');
const heldout = loadSplit('heldout.json');

const figures = {
  train: evaluate(train, ROUNDS),
  heldout: heldout ? evaluate(heldout, ROUNDS) : null,
};

for (const [split, f] of Object.entries(figures)) {
  if (!f) {
    console.log(`${split}: (no split file)`);
    continue;
  }
  console.log(
    `${split}: ${f.poisoned} poisoned, ${f.clean} clean — precision ${f.precision}, recall ${f.recall}, false quarantine ${f.falseQuarantine}; scan ${f.scanMsMean} ms mean, ${f.scanMsP99} ms p99`,
  );
  if (f.missed.length > 0) console.log(`  missed: ${f.missed.join(', ')}`);
  if (f.falselyQuarantined.length > 0)
    console.log(`  falsely quarantined: ${f.falselyQuarantined.join(', ')}`);
}
console.log(JSON.stringify({ bench: 'scan', rounds: ROUNDS, ...figures }));
