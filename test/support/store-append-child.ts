/**
 * @module A second process for the store conformance suite: opens the store at argv[2], says
 * `ready`, makes argv[4] (default 1) group commits of argv[3] audit records each through the
 * store's audit slot, and prints the seqs its records got as JSON, once they are in the chain
 * (where the slot stages them for a sequencer, after waiting for their integration). Run with
 * `node --import tsx`.
 */
import { openStore } from '../../src/records/store/index.js';
import { auditRows } from './store-rows.js';

const [url, count, batches] = process.argv.slice(2);
if (!url) throw new Error('usage: store-append-child.ts URL COUNT [BATCHES]');
const store = await openStore(url);
process.stdout.write('ready\n');
const callIds: string[] = [];
for (let b = 0; b < Number(batches ?? 1); b++) {
  const rows = auditRows(Number(count ?? 1), `child${b}`);
  for (const r of rows) callIds.push(String(r.call_id));
  const { durable } = await store.audit.commit(rows, [], b % 2 === 1);
  await durable;
}
await store.audit.settled();
const found = await store.db
  .selectFrom('audit_log')
  .select(['seq', 'call_id'])
  .where('call_id', 'in', callIds)
  .execute();
const seqOf = new Map(found.map((f) => [f.call_id, Number(f.seq)]));
const seqs = callIds.map((id) => seqOf.get(id) ?? -1);
process.stdout.write(`${JSON.stringify(seqs)}\n`);
await store.close();
