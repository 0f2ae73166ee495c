/**
 * @module A real gateway process for the crash test: REST on 127.0.0.1, SQLite, the demo catalog,
 * the audit key in a data folder, and a `search_tickets` handler that appends each query it runs
 * to an execution log before answering — the ground truth of what executed. Prints one JSON line
 * `{ base, apiKey }` when it listens; SIGTERM closes it cleanly (checkpoint on shutdown).
 * Usage: node --import tsx audit-gateway.ts DB_URL DATA_DIR EXEC_LOG
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { auditSigner } from '../../src/edge/cli/runtime-files.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { openGateway } from '../../src/host/toolgate.js';
import { DEFAULT_ORIGIN } from '../../src/records/audit/index.js';
import { ROOT } from './cli.js';
import { approvePendingReviews } from './reviews.js';

const [db, dataDir, execLog] = process.argv.slice(2) as [string, string, string];
const executor = demoExecutor().register('demo.search_tickets', (a) => {
  appendFileSync(execLog, `${String(a.query)}\n`);
  return { tickets: [] };
});
const tg = await openGateway({
  db,
  executor,
  auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
  audit: { checkpointEvery: 100, checkpointIntervalMs: 200 },
});
await tg.config.applyText(readFileSync(`${ROOT}/demo/catalog.yaml`, 'utf8'), {
  id: 'system:demo',
  via: 'system',
});
await approvePendingReviews(tg);
const apiKey = (await tg.keys.issue('support-bot', { id: 'test', via: 'library' })).apiKey;
const app = await buildServer(tg, { adminToken: 'crash-test-admin-token-0123456789abcdef' });
const base = await app.listen({ host: '127.0.0.1', port: 0 });
process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => tg.close())
    .then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ base, apiKey })}\n`);
