/**
 * Paths and URLs as a user writes them, through the whole gate: an absolute path under the root
 * and a URL with an upper-case host, a default port or brackets in its query are allowed, and the
 * tool receives the normalised value; each bypass form is refused under its own rule, audited,
 * and the tool never runs. Real files and symlinks in a temporary folder.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';

const admin: Actor = { id: 'forms-admin', via: 'library' };

let base = '';
let root = '';
let tg: Gateway;
/** What each tool last received. */
const received: Record<string, unknown>[] = [];

function urlTool(id: string, mark: Record<string, unknown>) {
  return validTool({
    id,
    name: id,
    data_access: 'public',
    description: 'Fetch one documentation page by its address.',
    egress: { mode: 'constrained', hosts: ['docs.example.com'] },
    required_capabilities: ['docs:read'],
    runtime: { kind: 'inline', handler: 'forms.record' },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: { url: { type: 'string', ...mark } },
    },
  });
}

before(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'toolgate-forms-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, 'docs'), { recursive: true });
  await writeFile(path.join(root, 'docs', 'readme.md'), 'hello');
  await mkdir(path.join(base, 'ws-evil'));
  await writeFile(path.join(base, 'ws-evil', 'secret.txt'), 'secret');
  await symlink('/etc', path.join(root, 'docs', 'link-out'));
  await symlink(path.join(root, 'docs'), path.join(root, 'docs', 'link-in'));
  // The tool's root is declared through a symlink; the sandbox binds its real path.
  await symlink('ws', path.join(base, 'ws-link'));
  const executor = demoExecutor().register('forms.record', (a) => {
    received.push(a);
    return { status: 'ok' };
  });
  tg = await openGateway({
    db: `sqlite:${path.join(base, 'toolgate.db')}`,
    executor,
    masterKey: MasterKey.generate(),
  });
  const tools = [
    urlTool('fetch_marked', { 'x-toolgate': 'url' }),
    urlTool('fetch_format', { format: 'uri' }),
    validTool({
      id: 'read_ws',
      name: 'read_ws',
      description: 'Read a file of the workspace.',
      required_capabilities: ['ws:read'],
      runtime: { kind: 'inline', handler: 'forms.record' },
      arguments_policy: { path_roots: [path.join(base, 'ws-link')] },
      input_schema: {
        type: 'object',
        additionalProperties: false,
        required: ['path'],
        properties: { path: { type: 'string', 'x-toolgate': 'path' } },
      },
    }),
  ];
  await tg.config.apply(
    [
      { kind: 'Agent', spec: { id: 'bot', owner: 'qa' } },
      ...tools.map((spec) => ({ kind: 'Tool', spec })),
      { kind: 'Grant', spec: { agent: 'bot', capabilities: ['docs:read', 'ws:read'] } },
    ],
    admin,
  );
  await approvePendingReviews(tg);
});

after(async () => {
  await tg?.close();
  if (base !== '') await rm(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function call(tool: string, args: Record<string, unknown>): Promise<GateDecision> {
  const s = await tg.sessions.open('bot', {});
  return tg.gate.invoke({ agentId: 'bot', sessionId: s.id }, tool, args);
}

async function receives(tool: string, args: Record<string, unknown>): Promise<unknown> {
  const before = received.length;
  const d = await call(tool, args);
  assert.equal(d.kind, 'allow', JSON.stringify(d));
  assert.equal(received.length, before + 1);
  return Object.values(received[received.length - 1] ?? {})[0];
}

async function refusedWith(tool: string, args: Record<string, unknown>, rule: string) {
  const before = received.length;
  const d = await call(tool, args);
  assert.equal(d.kind, 'deny', JSON.stringify(d));
  if (d.kind !== 'deny') return;
  assert.equal(d.code, 'POLICY_DENIED', `${d.rule}: ${d.message}`);
  assert.equal(d.rule, rule, d.message);
  assert.equal(received.length, before, 'the tool never ran');
}

describe('URL arguments through the gate', () => {
  for (const tool of ['fetch_marked', 'fetch_format']) {
    test(`${tool}: the tool receives the normalised URL`, async () => {
      assert.equal(
        await receives(tool, { url: 'HTTPS://Docs.Example.COM/x?a[]=1' }),
        'https://docs.example.com/x?a[]=1',
      );
      assert.equal(
        await receives(tool, { url: 'https://docs.example.com:443/guide' }),
        'https://docs.example.com/guide',
      );
    });

    test(`${tool}: refusals name the URL rule, not schema.format`, async () => {
      await refusedWith(tool, { url: 'https://docs.example.com:8443/' }, 'url.port');
      await refusedWith(tool, { url: 'https://[::1%25eth0]/' }, 'url.syntax');
      await refusedWith(tool, { url: 'not a url' }, 'url.syntax');
      await refusedWith(tool, { url: 'data:text/html,<b>x</b>' }, 'url.scheme');
      await refusedWith(
        tool,
        { url: 'https://docs\u{ff0e}example\u{ff0e}com/' },
        'url.not_canonical',
      );
      await refusedWith(
        tool,
        { url: 'https://DOCS.EXAMPLE.COM.EVIL.EXAMPLE/' },
        'url.host_not_allowed',
      );
    });
  }
});

describe('path arguments through the gate', () => {
  test('an absolute path under the root, in either spelling of the root, reaches the tool as its real path', async () => {
    const real = path.join(root, 'docs', 'readme.md');
    assert.equal(await receives('read_ws', { path: real }), real);
    assert.equal(
      await receives('read_ws', {
        path: path.join(base, 'ws-link', 'docs', 'link-in', 'readme.md'),
      }),
      real,
    );
    assert.equal(await receives('read_ws', { path: 'docs/readme.md' }), real);
  });

  test('each bypass form is refused under its own rule', async () => {
    await refusedWith('read_ws', { path: '/etc/passwd' }, 'path.escape');
    await refusedWith(
      'read_ws',
      { path: path.join(root, 'docs', 'link-out', 'passwd') },
      'path.escape',
    );
    await refusedWith('read_ws', { path: `${root}/../ws-evil/secret.txt` }, 'path.escape');
    await refusedWith('read_ws', { path: `${root}-evil/secret.txt` }, 'path.escape');
    await refusedWith('read_ws', { path: '%2e%2e/ws-evil/secret.txt' }, 'path.encoded');
    await refusedWith('read_ws', { path: '..%2fws-evil' }, 'path.encoded');
    await refusedWith('read_ws', { path: '~/.ssh/id_rsa' }, 'path.expansion');
    await refusedWith('read_ws', { path: '$HOME/.ssh/id_rsa' }, 'path.expansion');
    await refusedWith('read_ws', { path: '$' + '{HOME}/.ssh/id_rsa' }, 'path.expansion');
    await refusedWith('read_ws', { path: `file://${root}/docs/readme.md` }, 'path.file_url');
    await refusedWith('read_ws', { path: '\u{ff0e}\u{ff0e}/ws-evil' }, 'path.lookalike');
    await refusedWith('read_ws', { path: '..\u{ff0f}ws-evil' }, 'path.lookalike');
    await refusedWith('read_ws', { path: '..\u{2215}ws-evil' }, 'path.lookalike');
  });
});
