/**
 * @module A second process for the store conformance suite: opens the store at argv[2], says
 * `ready`, makes argv[4] (default 1) group commits of argv[3] audit records each through the
 * store's audit slot, and prints the seqs it was given as JSON. Run with `node --import tsx`.
 */
import { openStore } from '../../src/records/store/index.js';
import { auditRows } from './store-rows.js';

const [url, count, batches] = process.argv.slice(2);
if (!url) throw new Error('usage: store-append-child.ts URL COUNT [BATCHES]');
const store = await openStore(url);
process.stdout.write('ready\n');
const seqs: number[] = [];
for (let b = 0; b < Number(batches ?? 1); b++) {
  const { rows, durable } = await store.audit.commit(
    auditRows(Number(count ?? 1), `child${b}`),
    [],
    b % 2 === 1,
  );
  await durable;
  for (const r of rows) seqs.push(Number(r.seq));
}
process.stdout.write(`${JSON.stringify(seqs)}\n`);
await store.close();
