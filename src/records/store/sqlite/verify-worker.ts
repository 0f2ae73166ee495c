/**
 * @module A verify worker (docs/architecture.md C12, "Verify in parallel"): its own read-only
 * connection to the SQLite file, and for each range it is sent, the range's records read in one
 * statement and checked (audit-chain/range-check.ts). It writes nothing and decides nothing: the verifier
 * that sent the range builds the tree, checks the checkpoints and names every finding.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import {
  checkRange,
  columnOrder,
  type RangeColumns,
  rangeColumns,
} from '../../audit-chain/index.js';

interface RangeTask {
  readonly id: number;
  readonly from: number;
  readonly to: number;
}

const port = parentPort;
if (port) {
  const db = new BetterSqlite3(String(workerData.path), { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const statement = db
    .prepare<[number, number]>('select * from audit_log where seq > ? and seq <= ? order by seq')
    .raw(true);
  const names = statement.columns().map((c) => c.name);
  const columns: RangeColumns | null = rangeColumns(columnOrder(names), names);
  port.on('message', (task: RangeTask) => {
    let result: ReturnType<typeof checkRange> = { clean: false };
    try {
      if (columns) {
        const rows = statement.all(task.from, task.to) as unknown[][];
        result = checkRange(rows, columns, task.from, task.to);
      }
    } catch {
      // A damaged page or a busy file: the range is checked again on the verifier's own
      // connection, which names the damage.
    }
    port.postMessage(
      { id: task.id, result },
      result.clean ? [result.leaves.buffer as ArrayBuffer] : [],
    );
  });
}
