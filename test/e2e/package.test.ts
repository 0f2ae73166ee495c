/**
 * The package as a user gets it: `npm pack` of this checkout, installed into a scratch project,
 * imported by name (`import { openToolgate } from 'toolgate'`, as docs/api-reference.md shows) in a child node
 * process that opens a gateway on a temp SQLite database and runs a call through the gate.
 *
 * The install is offline, from the npm cache `npm ci` filled: the scratch project gets a lockfile
 * made of this repo's lockfile entries for the production dependencies (npm ci caches tarballs by
 * integrity but not the registry metadata a range would need). Install scripts are skipped:
 * better-sqlite3 ships its native addon prebuilt for each platform inside its package.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { cleanEnv, ensureBuilt, ROOT } from '../support/cli.js';

const run = promisify(execFile);
let dir: string;
let app: string;

interface LockEntry {
  readonly dev?: boolean;
  readonly [field: string]: unknown;
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-pack-'));
  // The checkout itself: in the compiled copy the suite runs on, package.json and dist/ are links,
  // which npm pack does not follow.
  const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: dirname(realpathSync(join(ROOT, 'package.json'))),
    env: cleanEnv(),
    timeout: 120_000,
  });
  const tarball = join(dir, packed.stdout.trim().split('\n').pop() ?? '');
  app = join(dir, 'app');
  mkdirSync(app);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
    bin: Record<string, string>;
  };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const spec = `file:${tarball}`;
  const packages: Record<string, unknown> = {
    '': { name: 'scratch', version: '1.0.0', dependencies: { toolgate: spec } },
    'node_modules/toolgate': {
      version: pkg.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path !== '' && entry.dev !== true) packages[path] = entry;
  }
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'scratch',
      version: '1.0.0',
      private: true,
      type: 'module',
      dependencies: { toolgate: spec },
    }),
  );
  writeFileSync(
    join(app, 'package-lock.json'),
    JSON.stringify({
      name: 'scratch',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages,
    }),
  );
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: app,
    env: cleanEnv(),
    timeout: 240_000,
  });
});

after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

test('the packed package imports by name as docs/api-reference.md shows, and openToolgate runs a call through the gate', async () => {
  writeFileSync(
    join(app, 'check.mjs'),
    `import * as api from 'toolgate';
import { openToolgate } from 'toolgate';
import { readFileSync } from 'node:fs';
const demo = process.argv[3];
const actor = { id: 'scratch-admin', via: 'library' };
const tg = await openToolgate({ db: 'sqlite:' + process.argv[2] });
await tg.admin.config.applyText(readFileSync(demo, 'utf8'), actor);
const session = await tg.agent.sessions.open('support-bot', {});
const ctx = { agentId: 'support-bot', sessionId: session.id };
const allowed = await tg.agent.invoke(ctx, 'get_order', { order_id: 'ORD-004211' });
const denied = await tg.agent.invoke(ctx, 'no_such_tool', {});
await tg.close();
console.log(JSON.stringify({ exports: Object.keys(api).sort(), allowed: allowed.kind, denied: denied.kind === 'deny' ? denied.code : denied.kind }));
`,
  );
  const out = await run(
    process.execPath,
    [
      'check.mjs',
      join(dir, 'scratch.db'),
      // The demo catalog as shipped in the package.
      join(app, 'node_modules', 'toolgate', 'demo', 'catalog.yaml'),
    ],
    {
      cwd: app,
      env: cleanEnv(),
      timeout: 60_000,
    },
  );
  const result = JSON.parse(out.stdout) as { exports: string[]; allowed: string; denied: string };
  assert.equal(result.allowed, 'allow');
  assert.equal(result.denied, 'TOOL_NOT_REGISTERED');
  assert.ok(result.exports.includes('openToolgate'));
  assert.ok(result.exports.includes('ToolgateError'));
  // Curated: named exports only, no default export, no internals (stores, the gate class).
  assert.ok(!result.exports.includes('default'));
  for (const internal of ['openStore', 'Gate', 'AuditWriter', 'LogVerifier']) {
    assert.ok(!result.exports.includes(internal), `${internal} is not public API`);
  }
});

test('the package carries types for its entry, and deep imports of internals are closed', async () => {
  const installed = join(app, 'node_modules', 'toolgate');
  const types = readFileSync(join(installed, 'dist', 'index.d.ts'), 'utf8');
  assert.match(types, /openToolgate/);
  writeFileSync(join(app, 'deep.mjs'), "await import('toolgate/dist/records/store/index.js');\n");
  await assert.rejects(
    run(process.execPath, ['deep.mjs'], { cwd: app, env: cleanEnv(), timeout: 30_000 }),
    /ERR_PACKAGE_PATH_NOT_EXPORTED/,
  );
});

test('toolgate/client imports by name from the packed package without the MCP client installed', async () => {
  const installed = join(app, 'node_modules', 'toolgate');
  assert.match(
    readFileSync(join(installed, 'dist', 'client', 'index.d.ts'), 'utf8'),
    /ToolgateClient/,
  );
  // A port the kernel gave and nothing listens on any more: connections are refused.
  const closed = createServer();
  await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((done) => closed.close(() => done()));
  writeFileSync(
    join(app, 'client.mjs'),
    `import { ToolgateClient } from 'toolgate/client';
const rest = new ToolgateClient({ url: 'http://127.0.0.1:${port}', token: 'k', retry: { attempts: 1 } });
const down = await rest.call('get_order', {}).catch((e) => e.code);
const mcp = new ToolgateClient({ transport: 'mcp', url: 'http://127.0.0.1:${port}/mcp', token: 'k' });
const missing = await mcp.tools().catch((e) => e.code);
console.log(JSON.stringify({ down, missing }));
`,
  );
  const out = await run(process.execPath, ['client.mjs'], {
    cwd: app,
    env: cleanEnv(),
    timeout: 30_000,
  });
  // A REST agent needs nothing more; MCP says which optional peer to install.
  assert.deepEqual(JSON.parse(out.stdout), {
    down: 'GATEWAY_UNAVAILABLE',
    missing: 'MCP_CLIENT_MISSING',
  });
});
