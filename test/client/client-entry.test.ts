/**
 * `toolgate/client` is the package's public entry for agents, and it must not pull the server
 * into an agent's process: the built entry's import graph (parsed with acorn, static and dynamic
 * imports) stays inside dist/client/ and reaches only `node:` builtins, with the MCP client loaded
 * lazily and only by the MCP transport. The entry resolves by name through package.json exports,
 * with its types, in a child process as an agent would import it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'acorn';
import { cleanEnv, ensureBuilt, ROOT } from '../support/cli.js';

const run = promisify(execFile);

interface Node {
  readonly type: string;
  readonly source?: { readonly value?: unknown } | null;
  readonly [key: string]: unknown;
}

/** Every module specifier a file names: static imports and re-exports, and `import()` of a literal. */
function specifiers(code: string): { static: string[]; dynamic: string[] } {
  const found = { static: [] as string[], dynamic: [] as string[] };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const n = node as Node;
    if (
      (n.type === 'ImportDeclaration' ||
        n.type === 'ExportNamedDeclaration' ||
        n.type === 'ExportAllDeclaration') &&
      typeof n.source?.value === 'string'
    )
      found.static.push(n.source.value);
    if (n.type === 'ImportExpression') {
      const src = n.source as Node | undefined;
      assert.equal(src?.type, 'Literal', 'every dynamic import names its module literally');
      found.dynamic.push(String(src?.value));
    }
    for (const value of Object.values(n)) if (typeof value === 'object') visit(value);
  };
  visit(parse(code, { ecmaVersion: 'latest', sourceType: 'module' }));
  return found;
}

test('the built entry imports nothing of the server: only dist/client/ and node builtins; MCP lazily', () => {
  ensureBuilt();
  const entry = join(ROOT, 'dist', 'client', 'index.js');
  const clientDir = dirname(entry);
  const seen = new Set<string>();
  const bare = new Set<string>();
  const lazy = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const found = specifiers(readFileSync(file, 'utf8'));
    for (const s of found.static) {
      if (s.startsWith('.')) {
        const target = resolve(dirname(file), s);
        assert.ok(
          !relative(clientDir, target).startsWith('..'),
          `${relative(ROOT, file)} imports ${s}: outside dist/client/, the server would load`,
        );
        queue.push(target);
      } else bare.add(s);
    }
    for (const s of found.dynamic) lazy.add(s);
  }
  assert.ok(seen.size >= 5, `walked ${seen.size} files`);
  assert.deepEqual(
    [...bare].filter((s) => !s.startsWith('node:')),
    [],
    'no package is imported when the entry loads',
  );
  assert.deepEqual([...lazy], ['@modelcontextprotocol/client'], 'only the MCP client, lazily');
});

test('an agent imports toolgate/client by name, with its types, through the package exports', async () => {
  ensureBuilt();
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, { types: string; import: string }>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
  const entry = pkg.exports['./client'];
  assert.ok(entry, 'package.json exports ./client');
  assert.ok(existsSync(join(ROOT, entry.types)), `${entry.types} is built`);
  assert.ok(existsSync(join(ROOT, entry.import)), `${entry.import} is built`);
  assert.equal(
    pkg.peerDependenciesMeta?.['@modelcontextprotocol/client']?.optional,
    true,
    'the MCP client is an optional peer: a REST agent installs nothing more',
  );
  // A port the kernel gave and that nothing listens on any more: connections are refused.
  const closed = createServer();
  await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((done) => closed.close(() => done()));
  const script = `
    const sdk = await import('toolgate/client');
    const client = new sdk.ToolgateClient({ url: 'http://127.0.0.1:${port}', token: 'k', retry: { attempts: 2, baseDelayMs: 1 } });
    const err = await client.call('x', {}).catch((e) => e);
    console.log(JSON.stringify({ exports: Object.keys(sdk).sort(), code: err.code, cause: err.lastCause.code, attempts: err.attempts }));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: cleanEnv(),
    timeout: 30_000,
  });
  const out = JSON.parse(stdout.trim()) as Record<string, unknown>;
  assert.deepEqual(out.exports, [
    'ApprovalWaitTimeoutError',
    'CallOutcomeUnknownError',
    'GatewayRequestError',
    'GatewayUnavailableError',
    'McpClientMissingError',
    'ToolgateClient',
    'isGatewayUnavailable',
  ]);
  assert.equal(out.code, 'GATEWAY_UNAVAILABLE', 'nothing listening: fails closed');
  assert.equal(out.cause, 'ECONNREFUSED');
  assert.equal(out.attempts, 2);
});
