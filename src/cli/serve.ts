/** @module `toolgate serve`: opens the store, loads the demo catalog if asked, serves REST on loopback. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildServer } from '../http/index.js';
import { checkAdminTokenStrength, loadOrCreateAdminToken } from '../identity/index.js';
import { openToolgate } from '../toolgate.js';

export interface ServeOptions {
  readonly db: string;
  readonly host: string;
  readonly port: number;
  readonly demo: boolean;
  readonly adminTokenFile: string;
  readonly bodyLimit: number;
  readonly version: string;
}

export const DEMO_CATALOG = fileURLToPath(new URL('../../demo/catalog.yaml', import.meta.url));
const SWEEP_INTERVAL_MS = 60_000;

export async function serve(options: ServeOptions): Promise<void> {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
    throw new TypeError(`--port must be 0–65535, got ${options.port}`);
  }
  const fromEnv = process.env.TOOLGATE_ADMIN_TOKEN;
  if (fromEnv !== undefined) checkAdminTokenStrength(fromEnv);
  const admin =
    fromEnv !== undefined
      ? { token: fromEnv, created: false }
      : loadOrCreateAdminToken(options.adminTokenFile);

  const tg = await openToolgate({ db: options.db });
  let demoSummary = '';
  if (options.demo) {
    const result = await tg.config.applyText(readFileSync(DEMO_CATALOG, 'utf8'), {
      id: 'system:demo',
      via: 'system',
    });
    const created = result.changes.filter((c) => c.action !== 'unchanged').length;
    demoSummary = `demo catalog: ${result.changes.length} documents, ${created} new`;
  }
  await tg.catalog.sweepLifecycle();
  const app = await buildServer(tg, {
    adminToken: admin.token,
    bodyLimit: options.bodyLimit,
    version: options.version,
    logger: { level: process.env.TOOLGATE_LOG_LEVEL ?? 'warn' },
  });
  const sweep = setInterval(() => {
    tg.catalog
      .sweepLifecycle()
      .catch((err: unknown) => app.log.error({ err }, 'lifecycle sweep failed'));
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  const address = await app.listen({ host: options.host, port: options.port });
  const lines = [
    `toolgate ${options.version} listening on ${address}`,
    `  database:    ${tg.store.location}`,
    ...(demoSummary ? [`  ${demoSummary}`] : []),
    `  API docs:    ${address}/docs   (OpenAPI: ${address}/openapi.json)`,
    `  admin token: ${admin.token}`,
    `               (${fromEnv !== undefined ? 'from TOOLGATE_ADMIN_TOKEN' : `kept in ${options.adminTokenFile}${admin.created ? ', created now' : ''}`})`,
    `  try:         curl -H "Authorization: Bearer $(cat ${options.adminTokenFile})" ${address}/v1/tools`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    clearInterval(sweep);
    process.stdout.write(`toolgate: ${signal}, shutting down\n`);
    app
      .close()
      .then(() => tg.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}
