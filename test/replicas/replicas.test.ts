/**
 * No sticky sessions: two toolgate replicas (the built CLI's `serve`, two processes) on one
 * PostgreSQL database behind HAProxy (round-robin, no stickiness). One agent's 2026-07-28 client
 * (the v2 SDK client, pinned) makes its calls through HAProxy; each answer names the replica that
 * served it (`X-Toolgate-Replica`, set by HAProxy). Calls alternate between the replicas, and the
 * permitted set, rate limits, budgets, the flow rule (private read on one replica, egress on the
 * other refused) and an approval round trip (approved over REST with TOTP) hold exactly as on one
 * replica. Then one replica is killed (SIGKILL) mid-run: the other carries on, every call that
 * was acknowledged is in the audit log, and `toolgate audit verify` passes on the database.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import type { Actor } from '../../src/core/index.js';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { approvalSigner, auditSigner } from '../../src/edge/cli/runtime-files.js';
import { openToolgate, type Toolgate } from '../../src/host/toolgate.js';
import { DEFAULT_ORIGIN } from '../../src/records/audit/index.js';
import { backends } from '../support/backends.js';
import { cleanEnv, ensureBuilt, MAIN, ROOT } from '../support/cli.js';
import { enrol } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import { personalToken } from '../support/world.js';
import { approvalRoundTrip, type CallResult, decisionOf } from './approval-round-trip.js';
import {
  type Balancer,
  haproxyAvailable,
  REPLICA_HEADER,
  type Replica,
  startBalancer,
  startReplicas,
  stopReplica,
} from './cluster.js';

const RUN = 'io.toolgate/run';
const MODERN = '2026-07-28';
const ADMIN_TOKEN = 'replicas-test-admin-token-0123456789abcdef';
const admin: Actor = { id: 'test-admin', via: 'library' };
const DEMO = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');

const postgres = backends().find((b) => b.name === 'postgres');
const skip = !postgres
  ? 'TOOLGATE_TEST_PG_URL is not set (run with scripts/run-tests.mjs --with-postgres)'
  : !haproxyAvailable() && process.env.TOOLGATE_REQUIRE_PG !== '1'
    ? 'haproxy is not installed (apt-get install haproxy)'
    : false;

function tool(id: string, spec: Record<string, unknown>) {
  return {
    kind: 'Tool',
    spec: inlineTool(
      id,
      {
        required_capabilities: ['replica:use'],
        // Any built-in inline handler that ignores its arguments: `serve` has the demo handlers.
        runtime: { kind: 'inline', handler: 'demo.grant_role' },
        ...spec,
      },
      'the replica tests',
    ),
  };
}

interface Served {
  readonly method: string | undefined;
  readonly name: string | undefined;
  readonly replica: string | null;
}

describe('two replicas behind a round-robin load balancer', { skip, concurrency: 1 }, () => {
  let dir = '';
  let dataDir = '';
  let db = '';
  let drop: () => Promise<void> = async () => {};
  let tg: Toolgate | null = null;
  let inspector: pg.Client | null = null;
  let replicas: Replica[] = [];
  let lb: Balancer | null = null;
  let botKey = '';
  let flowKey = '';
  let aliceToken = '';
  let aliceSecret = '';
  const clients: ClientV2[] = [];
  /** Every MCP request any client made, in order, with the replica that answered it. */
  const served: Served[] = [];

  const recordingFetch = async (
    url: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> => {
    const res = await fetch(url, init);
    let body: { method?: string; params?: { name?: string } } = {};
    try {
      body = typeof init?.body === 'string' ? JSON.parse(init.body) : {};
    } catch {
      // Not JSON: not an MCP request.
    }
    served.push({
      method: body.method,
      name: body.params?.name,
      replica: res.headers.get(REPLICA_HEADER),
    });
    return res;
  };

  async function modern(token: string): Promise<ClientV2> {
    assert.ok(lb);
    const client = new ClientV2(
      { name: 'replicas-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, inputRequired: { autoFulfill: false } },
    );
    await client.connect(
      new HttpV2(new URL(`${lb.base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
        fetch: recordingFetch,
      }),
    );
    clients.push(client);
    return client;
  }

  /** The replica that answered the latest tools/call of `name`. */
  const lastCallOf = (name: string): string | null =>
    served.findLast((s) => s.method === 'tools/call' && s.name === name)?.replica ?? null;

  /** A new run of the agent holding `key`, minted as a client's first handle-less call would. */
  const freshRun = async (key: string): Promise<string> => {
    assert.ok(tg);
    const id = await tg.agent.authenticate(key);
    assert.ok(id);
    return (await tg.agent.runs.mint(id, { via: 'test' })).handle;
  };

  const runOf = (result: unknown): string => {
    const handle = (result as CallResult)._meta?.[RUN];
    assert.equal(typeof handle, 'string', `no run handle in ${JSON.stringify(result)}`);
    return handle as string;
  };

  const rest = async (method: string, path: string, token: string, body?: unknown) => {
    assert.ok(lb);
    const res = await fetch(lb.base + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: (text.startsWith('{') ? JSON.parse(text) : text) as Record<string, unknown>,
      replica: res.headers.get(REPLICA_HEADER),
    };
  };

  /**
   * Audit records of `where`, once every record staged so far is in the chain: the replicas
   * stage their records and the fleet's sequencer integrates them within its bound
   * (docs/architecture.md §5, "The audit log across replicas").
   */
  const auditRows = async (where: string, params: unknown[]) => {
    assert.ok(inspector);
    const newest = (await inspector.query('select max(id) as id from audit_staged')).rows[0]?.id;
    for (let t0 = Date.now(); newest !== null && newest !== undefined; ) {
      const left = await inspector.query('select 1 from audit_staged where id <= $1 limit 1', [
        newest,
      ]);
      if (left.rowCount === 0) break;
      assert.ok(Date.now() - t0 < 10_000, 'staged audit records were integrated within 10 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    return (
      await inspector.query(
        `select seq, kind, call_id, tool_id, decision, code, outcome from audit_log where ${where} order by seq`,
        params,
      )
    ).rows as {
      seq: number;
      kind: string;
      call_id: string | null;
      tool_id: string;
      decision: string;
      code: string | null;
      outcome: string | null;
    }[];
  };

  before(async () => {
    if (!postgres) return;
    assert.ok(haproxyAvailable(), 'haproxy is not installed: apt-get install haproxy');
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-replicas-'));
    dataDir = join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const fresh = await postgres.fresh();
    db = fresh.url;
    drop = fresh.drop;
    // The catalog, keys and operators are written once, with the replicas' own key files (one
    // data folder for all: an approval signed on one replica is checked on the other).
    tg = await openToolgate({
      db,
      approvalSigner: () => approvalSigner(dataDir),
      auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
      masterKey: () => loadMasterKey({ dataDir }),
      audit: { checkpoints: false },
      // Nor does it probe: it never campaigns to lead, so the replicas lead (and sequence the
      // audit log) among themselves, and a spawnSync here never stalls the fleet's sequencer.
      detectors: false,
      health: false,
    });
    await tg.admin.config.applyText(DEMO, admin);
    await tg.admin.config.apply(
      [
        {
          kind: 'Agent',
          spec: { id: 'replica-bot', owner: 'qa', budgets: { spend_cents: 100 } },
        },
        { kind: 'Agent', spec: { id: 'flow-bot', owner: 'qa' } },
        tool('replica_echo', {}),
        tool('replica_limited', {
          rate_limit: { per_run: 3, per_window: { limit: 4, window_seconds: 3600 } },
        }),
        tool('replica_paid', { cost: { fixed_cents: 30 } }),
        tool('replica_approved', {
          action_class: 'reversible_write',
          approval: { mode: 'always', second_factor: true },
        }),
        { kind: 'Grant', spec: { agent: 'replica-bot', capabilities: ['replica:use'] } },
        { kind: 'Grant', spec: { agent: 'flow-bot', capabilities: ['webhook:send'] } },
      ],
      admin,
    );
    await approvePendingReviews(tg.admin);
    botKey = (await tg.admin.keys.issue('replica-bot', admin)).apiKey;
    flowKey = (await tg.admin.keys.issue('flow-bot', admin)).apiKey;
    aliceSecret = (await enrol(tg.admin, 'alice')).secret;
    aliceToken = await personalToken(tg.admin, 'alice', { name: 'replicas', expiresInDays: 1 });
    inspector = new pg.Client(db);
    await inspector.connect();

    const options = { db, dataDir, cwd: dir, adminToken: ADMIN_TOKEN };
    replicas = await startReplicas(2, options);
    lb = await startBalancer(replicas, dir);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await lb?.stop();
    await Promise.all(replicas.map((r) => stopReplica(r)));
    await inspector?.end().catch(() => {});
    await tg?.close();
    await drop();
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('one agent’s calls alternate between the replicas; the permitted set is the same on both', async () => {
    const client = await modern(botKey);
    const from = served.length;
    const run = await freshRun(botKey);
    // Past the client's list cache: each list is asked of a replica.
    const list = async () =>
      (await client.listTools({ _meta: { [RUN]: run } }, { cacheMode: 'bypass' })) as unknown as {
        tools: { name: string }[];
      };
    const first = await list();
    const second = await list();
    const names = first.tools.map((t) => t.name);
    assert.deepEqual(names, [
      'replica_approved',
      'replica_echo',
      'replica_limited',
      'replica_paid',
    ]);
    assert.deepEqual(
      second.tools.map((t) => t.name),
      names,
    );
    for (let i = 0; i < 4; i++) {
      const ok = await client.callTool({
        name: 'replica_echo',
        arguments: {},
        _meta: { [RUN]: run },
      });
      assert.equal(decisionOf(ok).kind, 'allow', JSON.stringify(ok));
      assert.equal(runOf(ok), run, 'the run continues on whichever replica serves the call');
      // A tool outside the permitted set is refused by either replica.
      const denied = await client.callTool({
        name: 'grant_role',
        arguments: {},
        _meta: { [RUN]: run },
      });
      assert.equal(decisionOf(denied).code, 'TOOL_NOT_REGISTERED', JSON.stringify(denied));
    }
    const mine = served.slice(from).map((s) => s.replica);
    assert.equal(mine.length, 10);
    assert.ok(
      mine.every((r) => r === 'a' || r === 'b'),
      `every answer names a replica: ${mine}`,
    );
    for (let i = 1; i < mine.length; i++) {
      assert.notEqual(mine[i], mine[i - 1], `round-robin, no stickiness: ${mine}`);
    }
  });

  test('a 2025-11-25 client (v1 SDK) keeps its MCP session on the replica that opened it', async () => {
    assert.ok(lb);
    const from = served.length;
    const v1 = new ClientV1({ name: 'replicas-legacy', version: '1.0.0' });
    await v1.connect(
      new HttpV1(new URL(`${lb.base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${botKey}` } },
        fetch: recordingFetch,
      }),
    );
    try {
      assert.ok((await v1.listTools()).tools.some((t) => t.name === 'replica_echo'));
      for (let i = 0; i < 4; i++) {
        const ok = await v1.callTool({ name: 'replica_echo', arguments: {} });
        assert.equal(decisionOf(ok).kind, 'allow', JSON.stringify(ok));
      }
    } finally {
      await v1.close();
    }
    const where = served
      .slice(from)
      .filter((s) => s.method === 'tools/list' || s.method === 'tools/call')
      .map((s) => s.replica);
    assert.equal(where.length, 5);
    assert.equal(new Set(where).size, 1, `one session, one replica: ${where}`);
  });

  test('rate limits hold across replicas: per run and per agent window', async () => {
    const client = await modern(botKey);
    const call = (run: string) =>
      client.callTool({ name: 'replica_limited', arguments: {}, _meta: { [RUN]: run } });
    const run = await freshRun(botKey);
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await call(run));
    const codes = outcomes.map((r) =>
      decisionOf(r).kind === 'allow' ? 'allow' : decisionOf(r).code,
    );
    // Three per run: the fourth call in the run is refused, whichever replica serves it.
    assert.deepEqual(codes, ['allow', 'allow', 'allow', 'RATE_LIMITED']);
    // Four per hour for the agent: a fresh run gets one more, then the window is spent.
    const other = await freshRun(botKey);
    const fresh = await call(other);
    assert.equal(decisionOf(fresh).kind, 'allow', JSON.stringify(fresh));
    const spent = await call(await freshRun(botKey));
    assert.equal(decisionOf(spent).code, 'RATE_LIMITED', JSON.stringify(spent));
    const where = served.filter((s) => s.name === 'replica_limited').map((s) => s.replica);
    assert.ok(where.includes('a') && where.includes('b'), `both replicas counted: ${where}`);
  });

  test('a run’s budget holds across replicas: 100 cents at 30 a call is three calls', async () => {
    const client = await modern(botKey);
    const run = await freshRun(botKey);
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await client.callTool({
        name: 'replica_paid',
        arguments: {},
        _meta: { [RUN]: run },
      });
      codes.push(decisionOf(r).kind === 'allow' ? 'allow' : String(decisionOf(r).code));
    }
    assert.deepEqual(codes, ['allow', 'allow', 'allow', 'BUDGET_EXCEEDED', 'BUDGET_EXCEEDED']);
    const charged = await auditRows("tool_id = $1 and kind = 'call.pre'", ['replica_paid']);
    assert.equal(charged.length, 3, 'no replica over-spent');
  });

  test('the flow rule holds across replicas: a private read on one stops egress on the other', async () => {
    assert.ok(tg);
    const client = await modern(flowKey);
    const egressRun = await freshRun(flowKey);
    const before = (await client.listTools(
      { _meta: { [RUN]: egressRun } },
      { cacheMode: 'bypass' },
    )) as unknown as { tools: { name: string }[] };
    assert.ok(before.tools.some((t) => t.name === 'post_webhook'));
    // Granted after the egress run was minted, so the toxic combination is not withheld there.
    await tg.admin.config.apply(
      [
        {
          kind: 'Grant',
          spec: { agent: 'flow-bot', capabilities: ['webhook:send', 'orders:read'] },
        },
      ],
      admin,
    );
    // Each replica sees the grant change within its revision check; two fresh runs in a row
    // (one per replica) offering get_order show both did.
    let readRun = '';
    let streak = 0;
    const until = Date.now() + 15_000;
    while (streak < 2) {
      assert.ok(Date.now() < until, 'the grant change reached both replicas');
      const run = await freshRun(flowKey);
      const list = (await client.listTools(
        { _meta: { [RUN]: run } },
        { cacheMode: 'bypass' },
      )) as unknown as { tools: { name: string }[] };
      if (list.tools.some((t) => t.name === 'get_order')) {
        streak++;
        readRun = run;
      } else {
        streak = 0;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const read = await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
      _meta: { [RUN]: readRun },
    });
    assert.equal(decisionOf(read).kind, 'allow', JSON.stringify(read));
    const readOn = lastCallOf('get_order');
    const send = await client.callTool({
      name: 'post_webhook',
      arguments: { target: 'https://hooks.example.com/x', payload: { order: 'ORD-004211' } },
      _meta: { [RUN]: egressRun },
    });
    const sendOn = lastCallOf('post_webhook');
    assert.ok(readOn && sendOn && readOn !== sendOn, `read on ${readOn}, egress on ${sendOn}`);
    assert.equal(send.isError, true, JSON.stringify(send));
    assert.equal(decisionOf(send).code, 'TOXIC_FLOW', JSON.stringify(send));
  });

  test('an approval round trip across replicas: pending on one, approved over REST with TOTP, the retry runs once', async () => {
    const client = await modern(botKey);
    const run = await freshRun(botKey);
    const call = { name: 'replica_approved', arguments: {}, _meta: { [RUN]: run } };
    const trip = await approvalRoundTrip(
      client,
      call,
      async (id) => {
        const decided = await rest('POST', `/v1/approvals/${id}/approve`, aliceToken, {
          totp: totpAt(aliceSecret, new Date()),
          reason: 'replica test',
        });
        assert.equal(decided.status, 200, JSON.stringify(decided.body));
      },
      async () => {
        const list = await rest('GET', '/v1/approvals?status=pending', aliceToken);
        assert.equal(list.status, 200, JSON.stringify(list.body));
        const mine = (list.body.approvals as { id: string; agent_id: string; tool_id: string }[])
          .filter((a) => a.agent_id === 'replica-bot' && a.tool_id === 'replica_approved')
          .map((a) => a.id);
        assert.equal(mine.length, 1, JSON.stringify(list.body));
        return mine[0] as string;
      },
    );
    assert.notEqual(trip.retried.isError, true, JSON.stringify(trip.retried));
    assert.equal(decisionOf(trip.retried).kind, 'allow', JSON.stringify(trip.retried));
    const calls = served.filter((s) => s.method === 'tools/call' && s.name === 'replica_approved');
    assert.ok(
      new Set(calls.map((s) => s.replica)).size === 2,
      `the call and its retry were served by different replicas: ${calls.map((s) => s.replica)}`,
    );
    // The same retry again runs nothing: the approval was used once.
    assert.notEqual(decisionOf(trip.replayed).kind, 'allow', JSON.stringify(trip.replayed));
    const ran = await auditRows("tool_id = $1 and kind = 'call.pre'", ['replica_approved']);
    assert.equal(ran.length, 1, `the approved call ran once: ${JSON.stringify(ran)}`);
    const shown = await rest('GET', `/v1/approvals/${trip.approvalId}`, aliceToken);
    assert.equal(shown.body.status, 'consumed', JSON.stringify(shown.body));
  });

  test('one replica killed mid-run: the other carries on, nothing acknowledged is lost, audit verify passes', async () => {
    const client = await modern(botKey);
    const run = await freshRun(botKey);
    const [victim, survivor] = replicas as [Replica, Replica];
    const acknowledged: string[] = [];
    const failures: string[] = [];
    const from = served.length;
    const TOTAL = 40;
    for (let i = 0; i < TOTAL; i++) {
      // Killed while a call is in flight: the call may fail, every later one must not.
      const call = client.callTool({ name: 'replica_echo', arguments: {}, _meta: { [RUN]: run } });
      if (i === 10) victim.child.kill('SIGKILL');
      try {
        const r = await call;
        const id = decisionOf(r).call_id;
        assert.equal(decisionOf(r).kind, 'allow', JSON.stringify(r));
        assert.equal(typeof id, 'string');
        acknowledged.push(id as string);
      } catch (err) {
        failures.push(`${i}: ${(err as Error).message}`);
      }
    }
    await victim.exited;
    // At most the call in flight at the kill and one sent before HAProxy's check saw it (a
    // refused connection is redispatched to the survivor).
    assert.ok(failures.length <= 2, `calls failed after the kill: ${failures.join('; ')}`);
    assert.ok(acknowledged.length >= TOTAL - 2);
    const after = served.slice(from).slice(-10);
    assert.ok(
      after.every((s) => s.replica === survivor.name),
      `the survivor serves every call once the victim is down: ${after.map((s) => s.replica)}`,
    );
    const rows = await auditRows('call_id = any($1)', [acknowledged]);
    const logged = new Set(rows.map((r) => r.call_id));
    const lost = acknowledged.filter((id) => !logged.has(id));
    assert.deepEqual(lost, [], 'every acknowledged call is in the audit log');
    const verify = spawnSync(
      process.execPath,
      [MAIN, '--db', db, '--data-dir', dataDir, '--json', 'audit', 'verify'],
      { cwd: dir, env: { ...cleanEnv(), TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN }, encoding: 'utf8' },
    );
    assert.equal(verify.status, 0, `${verify.stdout}\n${verify.stderr}`);
    const report = JSON.parse(verify.stdout) as { ok: boolean; records: number };
    assert.equal(report.ok, true, verify.stdout);
    assert.ok(report.records > acknowledged.length);
  });
});
