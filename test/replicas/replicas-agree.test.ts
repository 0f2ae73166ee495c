/**
 * Replicas that agree (docs/architecture.md §5): two toolgate replicas (the
 * built CLI's `serve`, two processes) on one PostgreSQL database behind HAProxy, each also reached
 * directly so a test chooses which replica serves which request.
 *
 * - A grant revoked by a third process reaches replica A through the fleet's LISTEN/NOTIFY within
 *   100 ms (A's fallback poll runs every 5 s while it listens), measured over several changes.
 * - A private read on replica A and the egress attempt on replica B raise the read-then-egress
 *   alert exactly once: the elected leader reads every replica's committed records.
 * - A tool registered while both run is probed once across the fleet (by the leader); the other
 *   replica shows the same health from the shared outcome.
 * - The leader is killed (SIGKILL): the other takes the lock within a bound (measured from the
 *   kill to the lock granted to the survivor's connection), then probes and raises alerts itself.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import type { Actor } from '../../src/core/index.js';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { approvalSigner, auditSigner } from '../../src/edge/cli/runtime-files.js';
import { openToolgate, type Toolgate } from '../../src/host/toolgate.js';
import { DEFAULT_ORIGIN } from '../../src/records/audit/index.js';
import { LOCK_CLASSES } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { ensureBuilt, ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import {
  type Balancer,
  haproxyAvailable,
  type Replica,
  startBalancer,
  startReplicas,
  stopReplica,
} from './cluster.js';

const ADMIN_TOKEN = 'replicas-agree-admin-token-0123456789abcdef';
const admin: Actor = { id: 'test-admin', via: 'library' };
const DEMO = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');
const SUPPORT_CAPS = [
  'orders:read',
  'tickets:read',
  'tickets:write',
  'email:send',
  'docs:read',
  'webhook:send',
];

const postgres = backends().find((b) => b.name === 'postgres');
const skip = !postgres
  ? 'TOOLGATE_TEST_PG_URL is not set (run with scripts/run-tests.mjs --with-postgres)'
  : !haproxyAvailable() && process.env.TOOLGATE_REQUIRE_PG !== '1'
    ? 'haproxy is not installed (apt-get install haproxy)'
    : false;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A read tool whose probe is a call of itself: probed at once when registered. */
function probedTool(id: string) {
  return {
    kind: 'Tool',
    spec: inlineTool(
      id,
      {
        required_capabilities: ['replica:use'],
        runtime: { kind: 'inline', handler: 'demo.grant_role' },
        probe: { kind: 'call', arguments: {} },
      },
      'the replica agreement tests',
    ),
  };
}

describe('replicas that agree: notifications, one detector, one prober, failover', {
  skip,
  concurrency: 1,
}, () => {
  let dir = '';
  let db = '';
  let drop: () => Promise<void> = async () => {};
  let tg: Toolgate | null = null;
  let inspector: pg.Client | null = null;
  let replicas: Replica[] = [];
  let lb: Balancer | null = null;
  let supportKey = '';
  let leader: Replica | null = null;

  const rest = async (base: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${supportKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : {}) as never };
  };
  const openSession = async (base: string): Promise<string> => {
    const r = await rest(base, 'POST', '/v1/sessions', {});
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return (r.body as { id: string }).id;
  };
  const search = (base: string, session: string) =>
    rest(base, 'POST', `/v1/sessions/${session}/calls`, {
      tool: 'search_tickets',
      arguments: { query: 'refund' },
    });
  const mail = (base: string, session: string) =>
    rest(base, 'POST', `/v1/sessions/${session}/calls`, {
      tool: 'send_email',
      arguments: { to: 'someone@customer.example', subject: 'Tickets', body: 'The list.' },
    });
  const probesRun = async (r: Replica): Promise<number> => {
    const res = await fetch(`${r.base}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 200));
    let n = 0;
    for (const m of text.matchAll(/^toolgate_health_probes_total\{[^}]*\} (\d+)/gm))
      n += Number(m[1]);
    return n;
  };
  const healthOf = async (r: Replica, id: string) => {
    const res = await fetch(`${r.base}/v1/tools/${id}/versions/1.0.0/health`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    return (await res.json()) as { state: string; last_probe_ok?: boolean | null };
  };
  const alertsOf = async (session: string): Promise<number> => {
    assert.ok(inspector);
    const r = await inspector.query(
      `select count(*)::int as n from audit_log where kind = 'alert' and rule = 'detector.read_then_egress' and session_id = $1`,
      [session],
    );
    return r.rows[0].n as number;
  };
  /** Waits until `check` holds, up to `ms`; answers how long it took. */
  const until = async (check: () => Promise<boolean>, ms: number, what: string) => {
    const t0 = Date.now();
    while (!(await check())) {
      if (Date.now() - t0 > ms) assert.fail(`${what}: not within ${ms} ms`);
      await sleep(25);
    }
    return Date.now() - t0;
  };

  before(async () => {
    if (!postgres) return;
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-agree-'));
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const fresh = await postgres.fresh();
    db = fresh.url;
    drop = fresh.drop;
    // The test's own gateway writes the catalog and changes grants; it neither probes nor runs
    // detectors, so it never campaigns to lead (only the two replicas do).
    tg = await openToolgate({
      db,
      approvalSigner: () => approvalSigner(dataDir),
      auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
      masterKey: () => loadMasterKey({ dataDir }),
      audit: { checkpoints: false },
      detectors: false,
      health: false,
    });
    await tg.admin.config.applyText(DEMO, admin);
    await tg.admin.config.apply(
      [{ kind: 'Grant', spec: { agent: 'support-bot', capabilities: ['replica:use'] } }],
      admin,
    );
    await approvePendingReviews(tg.admin);
    supportKey = (await tg.admin.keys.issue('support-bot', admin)).apiKey;
    inspector = new pg.Client(db);
    await inspector.connect();
    replicas = await startReplicas(2, { db, dataDir, cwd: dir, adminToken: ADMIN_TOKEN });
    lb = await startBalancer(replicas, dir);
  });

  after(async () => {
    await lb?.stop();
    await Promise.all(replicas.map((r) => stopReplica(r)));
    await inspector?.end().catch(() => {});
    await tg?.close();
    await drop();
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('a grant revoked elsewhere reaches a replica through LISTEN/NOTIFY within 100 ms', async () => {
    assert.ok(tg && lb);
    const [a] = replicas;
    assert.ok(a);
    // Both replicas hold the fleet's dedicated connection.
    const fleet = await inspector?.query(
      `select count(*)::int as n from pg_stat_activity where application_name = 'toolgate fleet'`,
    );
    assert.ok((fleet?.rows[0].n as number) >= 2, 'each replica has its fleet connection');
    const latencies: number[] = [];
    for (let trial = 0; trial < 5; trial++) {
      const session = await openSession(a.base);
      assert.equal((await search(a.base, session)).status, 200, 'allowed while granted');
      await tg.admin.agents.revoke('support-bot', ['tickets:read'], admin);
      const t0 = performance.now();
      let refused = false;
      while (performance.now() - t0 < 3000) {
        if ((await search(a.base, session)).status !== 200) {
          refused = true;
          break;
        }
      }
      latencies.push(Math.round(performance.now() - t0));
      assert.ok(refused, 'the revoked grant is refused on the other replica');
      await tg.admin.config.apply(
        [{ kind: 'Grant', spec: { agent: 'support-bot', capabilities: SUPPORT_CAPS } }],
        admin,
      );
      await sleep(50);
    }
    const sorted = [...latencies].sort((x, y) => x - y);
    console.log(
      `# revision change seen on the other replica after ms: ${latencies.join(', ')} (median ${sorted[2]}, max ${sorted[4]})`,
    );
    // The first change runs cold code on the replica (a loaded host made it 239 ms once); the
    // bound is on the notification's path, so it holds for the warm ones, and for all within 1 s.
    for (const ms of latencies.slice(1)) assert.ok(ms < 100, `seen within 100 ms: ${latencies}`);
    for (const ms of latencies) assert.ok(ms < 1000, `seen within 1 s: ${latencies}`);
  });

  test('an MCP session on a replica is told list_changed within 100 ms of a grant change elsewhere', async () => {
    assert.ok(tg);
    const [a] = replicas;
    assert.ok(a);
    // The official SDK client (2025-11-25, sessions), on replica A directly; the change is made
    // by the test's own gateway, a third process. A's fallback read runs every 5 s while it
    // listens, so a notification within 100 ms is the announcement's doing.
    const client = new Client({ name: 'replicas-agree', version: '1.0.0' });
    let heard: (() => void) | null = null;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => heard?.());
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${a.base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${supportKey}` } },
      }),
    );
    try {
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      assert.ok((await names()).includes('search_tickets'));
      const latencies: number[] = [];
      for (let trial = 0; trial < 5; trial++) {
        const revoked = trial % 2 === 0;
        const told = new Promise<number>((resolve) => {
          const t0 = performance.now();
          heard = () => resolve(performance.now() - t0);
        });
        if (revoked) await tg.admin.agents.revoke('support-bot', ['tickets:read'], admin);
        else
          await tg.admin.config.apply(
            [{ kind: 'Grant', spec: { agent: 'support-bot', capabilities: SUPPORT_CAPS } }],
            admin,
          );
        const ms = await Promise.race([told, sleep(3000).then(() => Number.POSITIVE_INFINITY)]);
        latencies.push(Math.round(ms));
        assert.equal((await names()).includes('search_tickets'), !revoked, `trial ${trial}`);
        await sleep(50);
      }
      console.log(`# list_changed on the other replica after ms: ${latencies.join(', ')}`);
      // As above: the first change is cold; the polling this replaced took up to 250 ms.
      for (const ms of latencies.slice(1)) assert.ok(ms < 100, `told within 100 ms: ${latencies}`);
      for (const ms of latencies) assert.ok(ms < 1000, `told within 1 s: ${latencies}`);
    } finally {
      heard = null;
      await client.close();
      await tg.admin.config.apply(
        [{ kind: 'Grant', spec: { agent: 'support-bot', capabilities: SUPPORT_CAPS } }],
        admin,
      );
    }
  });

  test('a read on replica A and the egress on replica B raise the read-then-egress alert once', async () => {
    const [a, b] = replicas;
    assert.ok(a && b);
    const session = await openSession(a.base);
    assert.equal((await search(a.base, session)).status, 200);
    const sent = await mail(b.base, session);
    assert.ok([200, 202, 403, 422].includes(sent.status), JSON.stringify(sent));
    const ms = await until(async () => (await alertsOf(session)) > 0, 5000, 'the alert');
    console.log(`# read-then-egress alert across replicas raised after ${ms} ms`);
    // Time for a second one to appear, were both replicas detecting.
    await sleep(1000);
    assert.equal(await alertsOf(session), 1, 'exactly one alert for the fleet');
  });

  test('a tool registered while both run is probed once across the fleet; both show its health', async () => {
    assert.ok(tg);
    const before = await Promise.all(replicas.map(probesRun));
    await tg.admin.config.apply([probedTool('agree_probed')], admin);
    await approvePendingReviews(tg.admin);
    let states: unknown[] = [];
    await until(
      async () => {
        const seen = await Promise.all(replicas.map((r) => healthOf(r, 'agree_probed')));
        states = seen;
        return seen.every((s) => s.state === 'healthy');
      },
      10_000,
      'both replicas show the probed tool healthy',
    ).catch((err: Error) => assert.fail(`${err.message}: ${JSON.stringify(states)}`));
    await sleep(500);
    const after = await Promise.all(replicas.map(probesRun));
    const ran = after.map((n, i) => n - (before[i] ?? 0));
    console.log(`# probes run per replica since the registration: ${ran.join(', ')}`);
    assert.equal(ran.filter((n) => n > 0).length, 1, `one replica probes: ${ran}`);
    assert.equal(
      ran.reduce((x, y) => x + y, 0),
      1,
      'the first probe ran once for the fleet',
    );
    leader = replicas[ran.findIndex((n) => n > 0)] ?? null;
  });

  test('the leader is killed: the other takes over within the bound, then probes and detects', async () => {
    assert.ok(tg && inspector && leader);
    const survivor = replicas.find((r) => r !== leader);
    assert.ok(survivor);
    const holder = async () =>
      (
        await inspector?.query(
          `select pid from pg_locks where locktype = 'advisory' and classid = $1 and objid = 0 and granted`,
          [LOCK_CLASSES.leader],
        )
      )?.rows[0]?.pid as number | undefined;
    const first = await holder();
    assert.ok(first, 'a replica holds the leader lock');
    const killedAt = performance.now();
    leader.child.kill('SIGKILL');
    await leader.exited;
    let next: number | undefined;
    while (performance.now() - killedAt < 5000) {
      next = await holder();
      if (next && next !== first) break;
      await sleep(5);
    }
    const failoverMs = Math.round(performance.now() - killedAt);
    console.log(`# leader killed: lock held by the survivor after ${failoverMs} ms`);
    assert.ok(next && next !== first, 'the survivor holds the leader lock');
    assert.ok(failoverMs < 1000, `failover within 1 s (ELECT_MS 200 ms): ${failoverMs} ms`);

    // The survivor probes a tool registered now…
    const before = await probesRun(survivor);
    await tg.admin.config.apply([probedTool('agree_after_failover')], admin);
    await approvePendingReviews(tg.admin);
    await until(
      async () => (await healthOf(survivor, 'agree_after_failover')).state === 'healthy',
      10_000,
      'the survivor probes the new tool',
    );
    assert.ok((await probesRun(survivor)) > before);
    // …and detects: a read then an egress, both on the survivor, alerted once.
    const session = await openSession(survivor.base);
    assert.equal((await search(survivor.base, session)).status, 200);
    await mail(survivor.base, session);
    await until(async () => (await alertsOf(session)) > 0, 5000, 'the alert after failover');
    await sleep(500);
    assert.equal(await alertsOf(session), 1);
  });
});
