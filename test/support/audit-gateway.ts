/**
 * @module A real gateway process for the crash test: a test world (world.ts) on the given
 * database with the demo catalog, REST on 127.0.0.1, the audit key in a data folder, and a
 * `search_tickets` handler that appends each query it runs to an execution log before answering —
 * the ground truth of what executed. Prints one JSON line `{ base, apiKey }` when it listens;
 * SIGTERM closes it cleanly (checkpoint on shutdown).
 * Usage: node --import tsx audit-gateway.ts DB_URL DATA_DIR EXEC_LOG
 */
import { appendFileSync } from 'node:fs';
import { auditSigner } from '../../src/edge/cli/runtime-files.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { DEFAULT_ORIGIN } from '../../src/records/audit/index.js';
import { openWorld } from './world.js';

const [db, dataDir, execLog] = process.argv.slice(2) as [string, string, string];
const executor = demoExecutor().register('demo.search_tickets', (a) => {
  appendFileSync(execLog, `${String(a.query)}\n`);
  return { tickets: [] };
});
const world = await openWorld({
  demo: true,
  actor: { id: 'system:demo', via: 'system' },
  options: {
    db,
    executor,
    auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
    audit: { checkpointEvery: 100, checkpointIntervalMs: 200 },
  },
  rest: { adminToken: 'crash-test-admin-token-0123456789abcdef' },
});
const apiKey = (await world.tg.keys.issue('support-bot', { id: 'test', via: 'library' })).apiKey;
process.once('SIGTERM', () => {
  void world.close().then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ base: world.base, apiKey })}\n`);
