/**
 * A command tool's `code_hash` (C9) is checked before every run: the tool runs while
 * its script is the one registered; a script changed afterwards — even to the same size with its
 * modification time put back — is refused before any sandbox starts, and runs again once restored.
 * A tool registered without a code_hash is not affected. Real gate, real namespace sandbox.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { commandCodeHash } from '../../src/execution/sandbox/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { validTool } from '../support/tools.js';

const admin = { id: 'test-admin', via: 'library' } as const;
const ORIGINAL = `import { readFileSync } from 'node:fs';
const args = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({ echo: args.text }));
`;
// Same length as ORIGINAL: a swap that keeps the size.
const TAMPERED = ORIGINAL.replace('{ echo: args.text }', '{ echo: "pwned!!" }');

describe('code_hash of command tools', () => {
  let dir: string;
  let script: string;
  let tg: Gateway;
  let sessionId: string;

  function tool(id: string, codeHash?: string) {
    return {
      kind: 'Tool',
      spec: validTool({
        id,
        name: id,
        description: 'Echo the text it is given, from a script run in the namespace sandbox.',
        data_access: 'none',
        required_capabilities: ['echo:run'],
        sandbox: { isolation: 'namespace' },
        runtime: { kind: 'command', argv: [process.execPath, script] },
        input_schema: {
          type: 'object',
          additionalProperties: false,
          required: ['text'],
          properties: { text: { type: 'string', maxLength: 100 } },
        },
        output_schema: { type: 'object' },
        ...(codeHash ? { code_hash: codeHash } : {}),
      }),
    };
  }

  const call = (name: string) =>
    tg.gate.invoke({ agentId: 'runner', sessionId }, name, { text: 'hello' });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-code-hash-'));
    chmodSync(dir, 0o755);
    script = join(dir, 'echo.mjs');
    writeFileSync(script, ORIGINAL, { mode: 0o644 });
    assert.equal(TAMPERED.length, ORIGINAL.length);
    // The runtime's own check is under test: no health probe (which would quarantine the
    // tampered tool, test/health/health-monitor.test.ts) may race the swaps below.
    tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}`, health: false });
    await tg.config.apply(
      [
        tool('pinned_echo', commandCodeHash([process.execPath, script])),
        tool('unpinned_echo'),
        { kind: 'Agent', spec: { id: 'runner', owner: 'qa' } },
        { kind: 'Grant', spec: { agent: 'runner', capabilities: ['echo:run'] } },
      ],
      admin,
    );
    sessionId = (await tg.sessions.open('runner')).id;
  });

  after(async () => {
    await tg?.close();
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('the registered script runs', async () => {
    const d = await call('pinned_echo');
    assert.equal(d.kind, 'allow', JSON.stringify(d));
    assert.deepEqual(d.kind === 'allow' ? d.output : null, { echo: 'hello' });
  });

  test('a script swapped for one of the same size, its mtime put back, is not run', async () => {
    const before = statSync(script);
    writeFileSync(script, TAMPERED);
    utimesSync(script, before.atime, before.mtime);
    const d = await call('pinned_echo');
    assert.equal(d.kind, 'deny', JSON.stringify(d));
    assert.equal(d.kind === 'deny' ? d.code : '', 'EXECUTION_FAILED');
    assert.equal(d.kind === 'deny' ? d.rule : '', 'sandbox.code_changed');
    // The benign neighbour without a pin runs what is there.
    const free = await call('unpinned_echo');
    assert.deepEqual(free.kind === 'allow' ? free.output : free, { echo: 'pwned!!' });
  });

  test('restored, it runs again; a missing script is refused', async () => {
    writeFileSync(script, ORIGINAL);
    const d = await call('pinned_echo');
    assert.deepEqual(d.kind === 'allow' ? d.output : d, { echo: 'hello' });
    rmSync(script);
    const gone = await call('pinned_echo');
    assert.equal(gone.kind === 'deny' ? gone.rule : gone.kind, 'sandbox.code_changed');
    writeFileSync(script, ORIGINAL, { mode: 0o644 });
  });
});
