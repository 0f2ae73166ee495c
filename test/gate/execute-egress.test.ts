/**
 * The gate's `execute` step with its real parts: the credential broker (after the gate passed), the
 * http runtime and the egress proxy (a namespace sandbox reaching the network only through its
 * lease), the session's egress budget, output scrubbing and the audit record's egress fields.
 * The upstream is a real HTTPS server on loopback with a test certificate, on a port the kernel
 * chose (two runs on one host never collide); the tools' URLs keep the default port the policy
 * allows, and the dialer's test-only `unsafeTestPorts` connects the checked 127.0.0.1:443 there.
 * Names resolve through a table, and only 127.0.0.1:443 is exempt from the address rule.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey, verifyCallToken } from '../../src/domain/credentials/index.js';
import { HttpToolRunner } from '../../src/execution/runtimes/index.js';
import { EgressProxy, SandboxService } from '../../src/execution/sandbox/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import { loopbackEgress, tableResolver } from '../support/egress.js';
import { httpReadTool, validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const tlsDir = join(ROOT, 'test', 'fixtures', 'egress-tls');
const FETCH = join(ROOT, 'test', 'fixtures', 'egress', 'fetch-through-proxy.mjs');
const API_SECRET = 'sk-test-api-token-0123456789abcdef';
const FETCH_SECRET = 'fetch-token-abcdefghijklmnop';
const SIGNING_SECRET = 'signing-key-0123456789abcdef0123456789abcdef';
const TARGET = '127.0.0.1:443';
const hasBwrap = await new SandboxService()
  .runner('namespace')
  .probe()
  .then((p) => p.available);

interface Seen {
  url: string;
  auth: string | undefined;
}

function allowed(d: GateDecision): Record<string, unknown> {
  assert.equal(d.kind, 'allow', JSON.stringify(d));
  return d.kind === 'allow' ? (d.output as Record<string, unknown>) : {};
}

function denied(d: GateDecision, code: string, rule?: RegExp): void {
  assert.equal(d.kind, 'deny', JSON.stringify(d));
  if (d.kind !== 'deny') return;
  assert.equal(d.code, code, `${d.rule}: ${d.message}`);
  if (rule) assert.match(d.rule, rule);
}

for (const backend of backends()) {
  describe(`gate execution with egress and credentials on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let inspector: Store;
    let server: https.Server;
    let proxy: EgressProxy;
    const seen: Seen[] = [];

    before(async () => {
      server = https.createServer(
        {
          key: readFileSync(join(tlsDir, 'server.key')),
          cert: readFileSync(join(tlsDir, 'server.pem')),
        },
        (req, res) => {
          seen.push({ url: req.url ?? '', auth: req.headers.authorization });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              path: req.url,
              auth: req.headers.authorization ?? null,
              pad: 'x'.repeat(600),
            }),
          );
        },
      );
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      const port = (server.address() as AddressInfo).port;
      const resolver = tableResolver({
        'api.example.test': ['127.0.0.1'],
        'other.example.test': ['127.0.0.1'],
        'meta.example.test': ['169.254.169.254'],
      });
      const egress = loopbackEgress(resolver, TARGET, port, tlsDir);
      proxy = egress.proxy;
      world = await openWorld({
        backend,
        options: {
          masterKey: MasterKey.generate(),
          egress,
        },
      });
      tg = world.tg;
      inspector = await openStore(world.db);
      await tg.config.apply(
        [
          httpReadTool('api_lookup', 'api.example.test', {
            credentials: { secret: 'api-token', inject: 'header', as: 'Authorization' },
          }),
          httpReadTool('api_lookup_b', 'api.example.test', {
            credentials: { secret: 'api-token', inject: 'header', as: 'Authorization' },
          }),
          httpReadTool('meta_lookup', 'meta.example.test'),
          httpReadTool('api_minted', 'api.example.test', {
            credentials: { secret: 'signing-key', inject: 'minted_jwt', as: 'Authorization' },
          }),
          validTool({
            id: 'fetcher',
            name: 'fetcher',
            description: 'Fetch one page of the partner API through the gateway.',
            data_access: 'public',
            required_capabilities: ['api:read'],
            egress: { mode: 'constrained', hosts: ['api.example.test'] },
            sandbox: { isolation: 'namespace', network: 'egress_proxy' },
            credentials: { secret: 'fetch-token', inject: 'env', as: 'API_TOKEN' },
            runtime: { kind: 'command', argv: ['/usr/bin/node', FETCH] },
            input_schema: {
              type: 'object',
              additionalProperties: false,
              required: ['host', 'path'],
              properties: { host: { type: 'string' }, path: { type: 'string' } },
            },
            output_schema: { type: 'object' },
          }),
        ].map((spec) => ({ kind: 'Tool', spec })),
        admin,
      );
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'caller', owner: 'qa' } },
          { kind: 'Grant', spec: { agent: 'caller', capabilities: ['api:read'] } },
          {
            kind: 'Agent',
            spec: { id: 'frugal', owner: 'qa', budgets: { egress_bytes: 2_500 } },
          },
          { kind: 'Grant', spec: { agent: 'frugal', capabilities: ['api:read'] } },
          {
            kind: 'Agent',
            spec: {
              id: 'metered',
              owner: 'qa',
              ceilings: {
                windows: [{ scope: 'agent', window_seconds: 3600, egress_bytes: 2_500 }],
              },
            },
          },
          { kind: 'Grant', spec: { agent: 'metered', capabilities: ['api:read'] } },
        ],
        admin,
      );
      await tg.secrets.set({ toolId: 'api_lookup', name: 'api-token' }, API_SECRET, admin);
      await tg.secrets.set({ toolId: 'fetcher', name: 'fetch-token' }, FETCH_SECRET, admin);
      await tg.secrets.set({ toolId: 'api_minted', name: 'signing-key' }, SIGNING_SECRET, admin);
    });

    after(async () => {
      await proxy.close();
      await inspector.close();
      await world.close();
      await new Promise((r) => server.close(r));
    });

    async function session(agentId = 'caller') {
      const s = await tg.sessions.open(agentId);
      return { agentId, sessionId: s.id };
    }

    async function postRecord(callId: string) {
      await tg.gate.flush();
      return inspector.db
        .selectFrom('audit_log')
        .selectAll()
        .where('call_id', '=', callId)
        .where('kind', '=', 'call.post')
        .executeTakeFirstOrThrow();
    }

    test('an http tool gets its credential, its echo is scrubbed, the record has host and bytes', async () => {
      const before = seen.length;
      const d = await tg.gate.invoke(await session(), 'api_lookup', { item: 'abc' });
      const out = allowed(d);
      assert.equal(seen.length, before + 1);
      assert.equal(seen.at(-1)?.auth, API_SECRET, 'the upstream received the credential');
      assert.equal(seen.at(-1)?.url, '/v1/items/abc');
      assert.notEqual(out.auth, API_SECRET);
      assert.ok(!JSON.stringify(out).includes(API_SECRET), 'the result never carries the secret');
      const record = await postRecord(d.kind === 'allow' ? d.callId : '');
      assert.equal(record.egress_host, 'api.example.test=127.0.0.1');
      assert.ok(Number(record.bytes_out) > 0);
      assert.match(String(record.details), /"redacted":true/);
      assert.ok(!JSON.stringify(record).includes(API_SECRET), 'nor does the audit record');
    });

    test('a minted_jwt tool sends a short-lived token scoped to this call, never the secret', async () => {
      const ctx = await session();
      const d = await tg.gate.invoke(ctx, 'api_minted', { item: 'jwt' });
      allowed(d);
      const auth = String(seen.at(-1)?.auth ?? '');
      assert.match(auth, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      assert.ok(!auth.includes(SIGNING_SECRET));
      const claims = await verifyCallToken(auth.slice('Bearer '.length), SIGNING_SECRET, {
        audience: 'api.example.test',
      });
      assert.equal(claims.jti, d.kind === 'allow' ? d.callId : '');
      assert.equal(claims.sid, ctx.sessionId);
      assert.ok(Number(claims.exp) - Number(claims.iat) <= 300, 'expires within 5 minutes');
    });

    test("a tool naming another tool's secret gets nothing and does not run", async () => {
      const before = seen.length;
      denied(
        await tg.gate.invoke(await session(), 'api_lookup_b', { item: 'abc' }),
        'CREDENTIAL_UNAVAILABLE',
        /^credentials\./,
      );
      assert.equal(seen.length, before, 'nothing reached the upstream');
    });

    test('a registered name that resolves to the metadata address is refused at egress', async () => {
      const before = seen.length;
      denied(
        await tg.gate.invoke(await session(), 'meta_lookup', { item: 'abc' }),
        'EGRESS_DENIED',
      );
      assert.equal(seen.length, before);
    });

    test("the session's egress budget hard-fails and is stored", async () => {
      const ctx = await session('frugal');
      const decisions: GateDecision[] = [];
      for (let i = 0; i < 6; i++) {
        decisions.push(await tg.gate.invoke(ctx, 'api_lookup', { item: `i${i}` }));
      }
      const ok = decisions.filter((d) => d.kind === 'allow').length;
      assert.ok(ok >= 1, 'the first call fits the budget');
      const last = decisions.at(-1) as GateDecision;
      denied(last, 'BUDGET_EXCEEDED');
      const row = await inspector.db
        .selectFrom('sessions')
        .select('egress_bytes')
        .where('id', '=', ctx.sessionId)
        .executeTakeFirstOrThrow();
      assert.ok(Number(row.egress_bytes) > 0 && Number(row.egress_bytes) <= 2_500);
      // The benign neighbour: another session of an unbudgeted agent is unaffected.
      allowed(await tg.gate.invoke(await session(), 'api_lookup', { item: 'z' }));
    });

    test("an agent's egress ceiling holds across new sessions: no call moves more than it has left", async () => {
      const decisions: GateDecision[] = [];
      const sessions: string[] = [];
      for (let i = 0; i < 6; i++) {
        const ctx = await session('metered');
        sessions.push(ctx.sessionId);
        decisions.push(await tg.gate.invoke(ctx, 'api_lookup', { item: `m${i}` }));
      }
      assert.ok(decisions.filter((d) => d.kind === 'allow').length >= 1);
      denied(decisions.at(-1) as GateDecision, 'BUDGET_EXCEEDED');
      const rows = await inspector.db
        .selectFrom('sessions')
        .select('egress_bytes')
        .where('id', 'in', sessions)
        .execute();
      const total = rows.reduce((sum, r) => sum + Number(r.egress_bytes), 0);
      assert.ok(total > 0 && total <= 2_500, `six sessions moved ${total} bytes in all`);
    });

    test('a budget lowered by an admin applies to an open session at once', async () => {
      await tg.config.apply(
        [
          {
            kind: 'Agent',
            spec: { id: 'shrink', owner: 'qa', budgets: { egress_bytes: 100_000 } },
          },
          { kind: 'Grant', spec: { agent: 'shrink', capabilities: ['api:read'] } },
        ],
        admin,
      );
      const ctx = await session('shrink');
      allowed(await tg.gate.invoke(ctx, 'api_lookup', { item: 'first' }));
      const { egress_bytes: spent } = await inspector.db
        .selectFrom('sessions')
        .select('egress_bytes')
        .where('id', '=', ctx.sessionId)
        .executeTakeFirstOrThrow();
      assert.ok(Number(spent) > 100);
      // Room for less than one more request: the next call must be cut by the new ceiling.
      await tg.config.apply(
        [
          {
            kind: 'Agent',
            spec: { id: 'shrink', owner: 'qa', budgets: { egress_bytes: Number(spent) + 50 } },
          },
        ],
        admin,
      );
      denied(await tg.gate.invoke(ctx, 'api_lookup', { item: 'second' }), 'BUDGET_EXCEEDED');
    });

    test('a sandboxed tool reaches its host only through the proxy; an unlisted host is refused', {
      skip: hasBwrap ? false : 'bubblewrap is not available',
    }, async () => {
      const ctx = await session();
      const d = await tg.gate.invoke(ctx, 'fetcher', {
        host: 'api.example.test',
        path: '/v1/items/from-sandbox',
      });
      const out = allowed(d);
      const why = (await postRecord(d.kind === 'allow' ? d.callId : '')).details;
      assert.equal(out.status, 'ok', `${JSON.stringify(out)} ${why}`);
      assert.match(String(out.body), /from-sandbox/);
      assert.notEqual(out.token_echo, FETCH_SECRET, 'the env credential was scrubbed');
      assert.ok(out.token_echo, 'the tool did receive a credential');
      const record = await postRecord(d.kind === 'allow' ? d.callId : '');
      assert.equal(record.egress_host, 'api.example.test=127.0.0.1');

      const other = allowed(
        await tg.gate.invoke(ctx, 'fetcher', { host: 'other.example.test', path: '/v1/x' }),
      );
      assert.equal(other.status, 'refused');
      assert.equal(other.code, 403);
    });
  });
}

test('the test-only port override applies only to an exempt test target, never to an arbitrary address', () => {
  assert.throws(
    () => new EgressProxy({ unsafeTestPorts: { [TARGET]: 8443 } }),
    /must be one of unsafeTestTargets/,
  );
  assert.throws(
    () =>
      new HttpToolRunner({ unsafeTestTargets: [TARGET], unsafeTestPorts: { '10.0.0.1:443': 1 } }),
    /must be one of unsafeTestTargets/,
  );
  assert.doesNotThrow(
    () => new EgressProxy({ unsafeTestTargets: [TARGET], unsafeTestPorts: { [TARGET]: 8443 } }),
  );
});
