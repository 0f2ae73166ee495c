/**
 * No sandbox sees toolgate's own files, over REST with a real bubblewrap sandbox on SQLite: a
 * command tool whose argv names a file in the data folder or the database (directly, through a
 * symlink, or as a hard link), a path root inside the data folder or holding it, and a provider
 * whose workspace or binds are the data folder are refused at registration with
 * `sandbox.data_folder`, and nothing is written; a tool registered where the folder was not
 * protected is refused before it runs. The benign neighbours — a script and a path root beside
 * the data folder (`data-other`, a prefix of the name but another folder) — register and run.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { echoTool } from '../support/tools.js';
import { restClient } from '../support/world.js';

const ADMIN = 'test-admin-token-data-folder-0123456789';
const ECHO = fileURLToPath(new URL('../fixtures/sandbox/echo-tool.sh', import.meta.url));

function commandTool(id: string, argv: string[], pathRoots?: string[]) {
  return echoTool(id, {
    output_schema: { type: 'object', required: ['echo'], properties: { echo: { type: 'object' } } },
    runtime: { kind: 'command', argv },
    sandbox: { isolation: 'namespace' },
    ...(pathRoots ? { arguments_policy: { path_roots: pathRoots } } : {}),
  });
}

describe('the data folder and the database are never shown to a sandbox', () => {
  let root: string;
  let data: string;
  let dbFile: string;
  let tg: Gateway;
  let app: FastifyInstance;
  let base = '';
  let key = '';

  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  const call = restClient<Record<string, any>>(() => base, ADMIN);
  const refusedAt = async (definition: unknown, pointer: string) => {
    const res = await call('POST', '/v1/tools', definition);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.code, 'DEFINITION_INVALID');
    const problems = res.body.details.problems as { pointer: string; rule: string }[];
    assert.deepEqual(
      problems.map((p) => [p.pointer, p.rule]),
      [[pointer, 'sandbox.data_folder']],
    );
    const id = (definition as { id: string }).id;
    assert.equal((await call('GET', `/v1/tools/${id}`)).status, 404, 'nothing was written');
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'toolgate-datafolder-'));
    chmodSync(root, 0o755);
    data = join(root, 'data');
    mkdirSync(data, { mode: 0o700 });
    mkdirSync(join(root, 'tools'));
    mkdirSync(join(root, 'data-other'));
    copyFileSync(ECHO, join(root, 'tools', 'echo.sh'));
    copyFileSync(ECHO, join(data, 'echo.sh'));
    symlinkSync(data, join(root, 'link-to-data'));
    dbFile = join(data, 'tg.db');
    tg = await openGateway({ db: `sqlite:${dbFile}`, protectedPaths: [data] });
    linkSync(dbFile, join(root, 'tools', 'copy.db'));
    app = await buildServer(tg, { adminToken: ADMIN });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    const applied = await call('POST', '/v1/apply', [
      {
        apiVersion: 'toolgate/v1',
        kind: 'Agent',
        spec: {
          id: 'df-bot',
          display_name: 'DF bot',
          description: 'Calls tools.',
          owner: 'sb-team',
        },
      },
      {
        apiVersion: 'toolgate/v1',
        kind: 'Grant',
        spec: { agent: 'df-bot', capabilities: ['sandbox:test'] },
      },
    ]);
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    key = String((await call('POST', '/v1/agents/df-bot/keys', {})).body.api_key);
  });
  after(async () => {
    await app?.close();
    await tg?.close();
    rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('argv naming a file in the data folder, the database, a symlinked path to it or a hard link of it is refused at registration', async () => {
    await refusedAt(
      commandTool('df_script', ['/bin/sh', join(data, 'echo.sh')]),
      '/runtime/argv/1',
    );
    await refusedAt(commandTool('df_db', ['/bin/cat', dbFile]), '/runtime/argv/1');
    await refusedAt(
      commandTool('df_link', ['/bin/sh', join(root, 'link-to-data', 'echo.sh')]),
      '/runtime/argv/1',
    );
    await refusedAt(
      commandTool('df_hardlink', ['/bin/cat', join(root, 'tools', 'copy.db')]),
      '/runtime/argv/1',
    );
  });

  test('a path root inside the data folder, holding it, or reaching it through a symlink is refused', async () => {
    const script = ['/bin/sh', join(root, 'tools', 'echo.sh')];
    await refusedAt(commandTool('df_root_in', script, [data]), '/arguments_policy/path_roots/0');
    await refusedAt(commandTool('df_root_up', script, [root]), '/arguments_policy/path_roots/0');
    await refusedAt(
      commandTool('df_root_link', script, [join(root, 'link-to-data')]),
      '/arguments_policy/path_roots/0',
    );
  });

  test('a script and a path root beside the data folder register and run in the sandbox', async () => {
    const res = await call(
      'POST',
      '/v1/tools',
      commandTool('df_ok', ['/bin/sh', join(root, 'tools', 'echo.sh')], [join(root, 'data-other')]),
    );
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const session = String((await call('POST', '/v1/sessions', {}, key)).body.id);
    const ran = await call(
      'POST',
      `/v1/sessions/${session}/calls`,
      { tool: 'df_ok', arguments: { text: 'hello' } },
      key,
    );
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    assert.deepEqual(ran.body.output.echo, { text: 'hello' });
  });

  test('a tool registered where the folder was not protected is refused before it runs', async () => {
    // Another gateway on the same database that was not told about the data folder.
    const careless = await openGateway({ db: `sqlite:${dbFile}` });
    try {
      await careless.catalog.register(
        commandTool('df_sneaked', ['/bin/sh', join(data, 'echo.sh')]),
        { id: 'test-admin', via: 'library' },
      );
    } finally {
      await careless.close();
    }
    const session = String((await call('POST', '/v1/sessions', {}, key)).body.id);
    const denied = await call(
      'POST',
      `/v1/sessions/${session}/calls`,
      { tool: 'df_sneaked', arguments: { text: 'hello' } },
      key,
    );
    assert.equal(denied.status, 502, JSON.stringify(denied.body));
    assert.equal(denied.body.code, 'EXECUTION_FAILED');
    assert.equal(denied.body.details.rule, 'sandbox.data_folder');
    assert.ok(!JSON.stringify(denied.body).includes(data), 'the caller is not told the host path');
  });

  test('a provider whose workspace or binds are the data folder is refused, and not stored', async () => {
    for (const [field, spec, pointer] of [
      ['workspace', { workspace: { source: data } }, '/workspace/source'],
      ['binds', { binds: [{ source: root }] }, '/binds/0/source'],
    ] as const) {
      const res = await call('POST', '/v1/providers', {
        name: `files_${field}`,
        owner: 'platform-team',
        command: ['/usr/bin/node', join(root, 'tools', 'server.js')],
        isolation: 'namespace',
        ...spec,
      });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'INPUT_INVALID');
      assert.deepEqual(
        (res.body.details.problems as { pointer: string; rule: string }[]).map((p) => [
          p.pointer,
          p.rule,
        ]),
        [[pointer, 'sandbox.data_folder']],
      );
      assert.equal((await call('GET', `/v1/providers/files_${field}`)).status, 404);
    }
  });
});
