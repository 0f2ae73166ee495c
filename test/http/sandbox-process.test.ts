/**
 * @module The `process` driver over REST: a pure command tool called by an
 * agent runs with no network (a listener on the host's 127.0.0.1 sees no connection), leaves no
 * detached process behind, and runs as a uid of its own from the configured range, not `nobody`.
 * Real server on loopback, real SQLite and PostgreSQL, real unshare/setpriv.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN = 'test-admin-token-sandbox-process-0123';
const SCRIPT = fileURLToPath(new URL('../fixtures/sandbox/process-probe.mjs', import.meta.url));

const CONFIG = [
  {
    apiVersion: 'toolgate/v1',
    kind: 'Agent',
    spec: {
      id: 'proc-bot',
      display_name: 'Process bot',
      description: 'Calls a pure tool in the process driver.',
      owner: 'sandbox-team',
    },
  },
  {
    apiVersion: 'toolgate/v1',
    kind: 'Grant',
    spec: { agent: 'proc-bot', capabilities: ['pure:run'] },
  },
  {
    apiVersion: 'toolgate/v1',
    kind: 'Tool',
    spec: validTool({
      id: 'proc_probe',
      name: 'proc_probe',
      description: 'Compute a small answer from the arguments alone, in the process sandbox.',
      data_access: 'none',
      required_capabilities: ['pure:run'],
      input_schema: {
        type: 'object',
        additionalProperties: false,
        required: ['port', 'marker'],
        properties: {
          port: { type: 'integer', minimum: 1, maximum: 65535 },
          marker: { type: 'string', pattern: '^[0-9]{3}\\.[0-9]{2}$' },
        },
      },
      output_schema: {
        type: 'object',
        required: ['connected', 'uid'],
        properties: { connected: { type: 'boolean' }, uid: { type: 'integer' } },
      },
      runtime: { kind: 'command', argv: [process.execPath, SCRIPT] },
      sandbox: { isolation: 'process', limits: { memory_mb: 512 } },
    }),
  },
];

/** Host processes whose command line contains the marker; waits ≤ 2 s for them to go, then kills. */
async function leftovers(marker: string): Promise<number[]> {
  const scan = () =>
    readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .filter((n) => {
        try {
          return readFileSync(`/proc/${n}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(marker);
        } catch {
          return false;
        }
      })
      .map(Number);
  const deadline = Date.now() + 2_000;
  let found = scan();
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    found = scan();
  }
  for (const pid of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  return found;
}

for (const backend of backends()) {
  describe(`the process driver over REST on ${backend.name}`, () => {
    let world: World;
    let listener: Server;
    let accepted = 0;
    let port = 0;
    let base = '';
    let key = '';
    let session = '';

    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    const send = restClient<Record<string, any>>(() => base);
    const post = (path: string, body: unknown, token: string) => send('POST', path, body, token);

    before(async () => {
      listener = createServer((s) => {
        accepted++;
        s.destroy();
      });
      await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
      port = (listener.address() as { port: number }).port;
      world = await openWorld({ backend, rest: { adminToken: ADMIN } });
      base = world.base;
      const applied = await post('/v1/apply', CONFIG, ADMIN);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      key = String((await post('/v1/agents/proc-bot/keys', {}, ADMIN)).body.api_key);
      session = String((await post('/v1/sessions', {}, key)).body.id);
    });
    after(async () => {
      await world?.close();
      await new Promise<void>((r) => listener.close(() => r()));
    });

    test('a pure tool answers, with no network, no leftover process, as a uid of its own', async () => {
      const marker = backend.name === 'sqlite' ? '301.61' : '301.62';
      const res = await post(
        `/v1/sessions/${session}/calls`,
        { tool: 'proc_probe', arguments: { port, marker } },
        key,
      );
      // Looked for (and killed) first, so a failing assertion below leaves nothing running.
      const left = await leftovers(`sleep ${marker}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.output.connected, false, JSON.stringify(res.body.output));
      assert.equal(accepted, 0, 'the host listener was reached from the sandbox');
      const uid = Number(res.body.output.uid);
      assert.ok(uid >= 100_000 && uid <= 165_535, `ran as uid ${uid}`);
      assert.deepEqual(left, []);
    });
  });
}
