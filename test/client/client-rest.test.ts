/**
 * The client SDK (`toolgate/client`) over REST against a real gateway — `buildServer` on a
 * SQLite file — that is stopped and started again on the same port under it: the last-known tool
 * set is served from the cache during the outage (and not past its TTL, nor once the gateway said
 * it is stale), a call during the outage fails closed, a call after the restart succeeds, a call
 * whose answer was lost is retried under the same idempotency key and runs once, a denial is never
 * retried, and an approval is a pending result the agent waits on. The scenario runs against the
 * source and against the built entry, imported by name through the package's exports.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type * as ClientModule from '../../src/client/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { ApprovalSigner } from '../../src/domain/decisions/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { generateNoteSigner } from '../../src/records/audit/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { ensureBuilt } from '../support/cli.js';
import { operator } from '../support/operators.js';
import { ADMIN_TOKEN, RestartableGateway } from '../support/restartable-gateway.js';

type Client = typeof ClientModule;
const setup = { id: 'setup', via: 'library' } as const;
const FAST_RETRY = { attempts: 3, baseDelayMs: 20, maxDelayMs: 40 };

/** The built entry, resolved by name through package.json "exports" (a self-reference). */
async function builtEntry(): Promise<Client> {
  ensureBuilt();
  const specifier = 'toolgate/client';
  return (await import(specifier)) as Client;
}

/**
 * A loopback hop in front of the gateway that can lose the gateway's answer: the request goes
 * through and runs, then the client's connection is destroyed instead of being answered (a
 * proxy or network dropping the response). It records every call body it carried.
 */
class LossyHop {
  readonly server: Server;
  readonly calls: Record<string, unknown>[] = [];
  loseNextCallAnswer = false;
  /** Hears every request the hop carries (`GET /v1/sessions/…/idempotency/…`, say). */
  onRequest: ((method: string, url: string) => void) | null = null;
  answerNextWith: { status: number; headers: Record<string, string>; body: string } | null = null;

  constructor(readonly upstream: () => number) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.onRequest?.(req.method ?? '', req.url ?? '');
        const isCall = req.method === 'POST' && (req.url ?? '').endsWith('/calls');
        if (isCall) this.calls.push(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
        if (isCall && this.answerNextWith) {
          const a = this.answerNextWith;
          this.answerNextWith = null;
          res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
          res.end(a.body);
          return;
        }
        const lose = isCall && this.loseNextCallAnswer;
        if (lose) this.loseNextCallAnswer = false;
        const up = request(
          {
            host: '127.0.0.1',
            port: this.upstream(),
            method: req.method,
            path: req.url,
            headers: { ...req.headers, connection: 'close' },
          },
          (upRes) => {
            const parts: Buffer[] = [];
            upRes.on('data', (c: Buffer) => parts.push(c));
            upRes.on('end', () => {
              // The gateway answered (the call ran); the agent never hears it.
              if (lose) {
                req.socket.destroy();
                return;
              }
              res.writeHead(upRes.statusCode ?? 502, upRes.headers);
              res.end(Buffer.concat(parts));
            });
          },
        );
        up.on('error', () => req.socket.destroy());
        up.end(body);
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('the client SDK over REST rides out a gateway restart', () => {
  let dir: string;
  let gw: RestartableGateway;
  let inspector: Store;
  let agentKey: string;
  let hop: LossyHop;
  let hopUrl: string;
  /** While set, the next add_label run waits for it before it finishes. */
  let hold: Promise<void> | null = null;

  /** How many times a tool started running (its `call.pre` records), and replays answered. */
  async function auditCount(tool: string, kind: string): Promise<number> {
    const rows = await inspector.db
      .selectFrom('audit_log')
      .select('seq')
      .where('tool_id', '=', tool)
      .where('kind', '=', kind)
      .execute();
    return rows.length;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-client-'));
    const db = `sqlite:${join(dir, 'tg.db')}`;
    // add_label can be held running (until the test lets it finish) to show a retry meeting
    // its own first attempt still in progress.
    const executor = demoExecutor();
    const addLabel = executor.handler('demo.add_label');
    executor.register('demo.add_label', async (args, context) => {
      const held = hold;
      if (held !== null) {
        hold = null;
        await held;
      }
      return addLabel?.(args, context);
    });
    gw = new RestartableGateway({
      db,
      masterKey: MasterKey.generate(),
      approvalSigner: ApprovalSigner.generate(),
      auditSigner: generateNoteSigner('client-test').signer,
      executor,
    });
    const tg = await gw.start(true);
    agentKey = (await tg.keys.issue('support-bot', setup)).apiKey;
    inspector = await openStore(db);
    hop = new LossyHop(() => gw.port);
    hopUrl = await hop.listen();
  });

  after(async () => {
    await hop.close();
    await gw.stop();
    await inspector.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [label, load] of [
    ['source', async () => (await import('../../src/client/index.js')) as Client],
    ['built entry toolgate/client', builtEntry],
  ] as const) {
    test(`${label}: the cache serves tools during the outage, a call fails closed, then succeeds after the restart`, async () => {
      const sdk = await load();
      const client = new sdk.ToolgateClient({ url: gw.url, token: agentKey, retry: FAST_RETRY });
      const live = await client.tools();
      assert.equal(live.source, 'gateway');
      const names = live.tools.map((t) => t.name);
      assert.ok(names.includes('add_label'), names.join());
      assert.ok(!names.includes('grant_role'), 'only the agent’s own set');
      assert.match(String(live.revision), /^"[A-Za-z0-9_-]+"$/);
      const again = await client.tools();
      assert.equal(again.revision, live.revision, 'an unchanged set keeps its validator (304)');

      const ranBefore = await auditCount('add_label', 'call.pre');
      await gw.stop();
      const cached = await client.tools();
      assert.equal(cached.source, 'cache');
      assert.deepEqual(cached.tools, live.tools);

      const args = { ticket_id: 'T-1001', label: 'billing' };
      const failed = await client.call('add_label', args).then(
        () => assert.fail('a call with the gateway away must fail'),
        (err: unknown) => err,
      );
      assert.ok(failed instanceof sdk.GatewayUnavailableError, String(failed));
      assert.equal(failed.code, 'GATEWAY_UNAVAILABLE');
      assert.equal(failed.attempts, FAST_RETRY.attempts, 'bounded retries');
      assert.equal(failed.lastCause.kind, 'network');
      assert.equal(failed.mayHaveRun, false, 'every connection was refused');
      assert.equal(typeof failed.idempotencyKey, 'string');

      await gw.start();
      assert.equal(await auditCount('add_label', 'call.pre'), ranBefore, 'nothing ran meanwhile');
      const done = await client.call('add_label', args, {
        idempotencyKey: failed.idempotencyKey ?? '',
      });
      assert.equal(done.kind, 'allow', JSON.stringify(done));
      assert.equal(await auditCount('add_label', 'call.pre'), ranBefore + 1);
      const back = await client.tools();
      assert.equal(back.source, 'gateway');
      assert.equal(back.revision, live.revision);
      await client.close();
    });
  }

  test('past its TTL the cached set is not served: listing fails closed', async () => {
    let now = 1_000_000;
    const { ToolgateClient, GatewayUnavailableError } = await import('../../src/client/index.js');
    const client = new ToolgateClient({
      url: gw.url,
      token: agentKey,
      retry: FAST_RETRY,
      cache: { ttlMs: 60_000, now: () => now },
    });
    await client.tools();
    await gw.stop();
    try {
      now += 59_000;
      assert.equal((await client.tools()).source, 'cache', 'within the TTL');
      now += 2_000;
      await assert.rejects(client.tools(), GatewayUnavailableError);
    } finally {
      await gw.start();
    }
  });

  test('a call whose answer was lost is retried with the same idempotency key and runs once', async () => {
    const { ToolgateClient } = await import('../../src/client/index.js');
    const client = new ToolgateClient({ url: hopUrl, token: agentKey, retry: FAST_RETRY });
    const ranBefore = await auditCount('create_ticket', 'call.pre');
    const replayedBefore = await auditCount('create_ticket', 'call.replayed');
    hop.calls.length = 0;
    hop.loseNextCallAnswer = true;
    const result = await client.call('create_ticket', {
      customer_email: 'c42@example.com',
      subject: 'Invoice missing',
      body: 'The March invoice never arrived.',
    });
    assert.equal(result.kind, 'allow', JSON.stringify(result));
    assert.equal(hop.calls.length, 2, 'sent twice: the first answer was lost');
    const [first, second] = hop.calls;
    assert.equal(typeof first?.idempotency_key, 'string');
    assert.equal(second?.idempotency_key, first?.idempotency_key, 'the same key on the retry');
    assert.equal(await auditCount('create_ticket', 'call.pre'), ranBefore + 1, 'ran once');
    assert.equal(await auditCount('create_ticket', 'call.replayed'), replayedBefore + 1);
    if (result.kind === 'allow') assert.equal(result.idempotencyKey, first?.idempotency_key);
  });

  test('a retry told its first attempt is still running waits for that outcome: never a denial, never a new key, and the call runs once', async () => {
    const { ToolgateClient } = await import('../../src/client/index.js');
    // Each attempt gives up after 300 ms; the first one's tool is held running until the SDK,
    // having been told "in progress" on its own retry, asks the gateway for the key's outcome.
    const client = new ToolgateClient({
      url: hopUrl,
      token: agentKey,
      retry: FAST_RETRY,
      requestTimeoutMs: 300,
    });
    const ranBefore = await auditCount('add_label', 'call.pre');
    let finish: () => void = () => {};
    hold = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const asked: string[] = [];
    hop.onRequest = (method, url) => {
      if (method === 'GET' && url.includes('/idempotency/')) {
        asked.push(url);
        finish();
      }
    };
    hop.calls.length = 0;
    try {
      const result = await client.call('add_label', { ticket_id: 'T-2001', label: 'urgent' });
      assert.equal(result.kind, 'allow', JSON.stringify(result));
      assert.ok(asked.length >= 1, 'the SDK asked for the outcome of its key');
      assert.match(asked[0] ?? '', /\?tool=add_label$/);
      assert.ok(hop.calls.length >= 3, `attempt, retry, resend: ${hop.calls.length}`);
      const keys = new Set(hop.calls.map((c) => c.idempotency_key));
      assert.equal(keys.size, 1, 'one key on every send');
      assert.equal(await auditCount('add_label', 'call.pre'), ranBefore + 1, 'ran once');
      if (result.kind === 'allow') {
        const known = await client.outcome('add_label', result.idempotencyKey ?? '');
        assert.equal(known?.state, 'succeeded');
        assert.equal(known?.callId, result.callId);
      }
      assert.equal(await client.outcome('add_label', 'never-sent-key'), null);
    } finally {
      finish();
      hold = null;
      hop.onRequest = null;
    }
  });

  test('a gateway that recorded no outcome for the key is CallOutcomeUnknownError, not a denial', async () => {
    const { ToolgateClient, CallOutcomeUnknownError } = await import('../../src/client/index.js');
    const client = new ToolgateClient({ url: hopUrl, token: agentKey, retry: FAST_RETRY });
    hop.calls.length = 0;
    hop.answerNextWith = {
      status: 409,
      headers: {},
      body: JSON.stringify({
        code: 'IDEMPOTENCY_CONFLICT',
        message: 'the call with this idempotency key was started and its outcome was not recorded',
        details: { rule: 'idempotency.outcome_unknown', call_id: 'call_x' },
      }),
    };
    const err = await client
      .call('add_label', { ticket_id: 'T-2002', label: 'bug' }, { idempotencyKey: 'lost-1' })
      .then(
        (r) => assert.fail(`answered ${JSON.stringify(r)}`),
        (e: unknown) => e,
      );
    assert.ok(err instanceof CallOutcomeUnknownError, String(err));
    assert.equal(err.idempotencyKey, 'lost-1');
    assert.equal(err.state, 'unknown');
    assert.doesNotMatch(err.message, /use a new key/i);
    assert.equal(hop.calls.length, 1, 'not sent again');
    // Its benign neighbour: another key's call (arguments differ) is the gateway's denial as is.
    const first = await client.call(
      'add_label',
      { ticket_id: 'T-2003', label: 'bug' },
      { idempotencyKey: 'reused-1' },
    );
    assert.equal(first.kind, 'allow');
    const differ = await client.call(
      'add_label',
      { ticket_id: 'T-2004', label: 'bug' },
      { idempotencyKey: 'reused-1' },
    );
    assert.equal(
      differ.kind === 'deny' ? differ.rule : differ.kind,
      'idempotency.arguments_differ',
    );
  });

  test('503 with Retry-After is retried; a denial is answered at once and never retried', async () => {
    const { ToolgateClient } = await import('../../src/client/index.js');
    const client = new ToolgateClient({ url: hopUrl, token: agentKey, retry: FAST_RETRY });
    hop.calls.length = 0;
    hop.answerNextWith = {
      status: 503,
      headers: { 'retry-after': '0' },
      body: JSON.stringify({ code: 'OVERLOADED', message: 'busy', details: {} }),
    };
    const ok = await client.call('add_label', { ticket_id: 'T-1002', label: 'bug' });
    assert.equal(ok.kind, 'allow', JSON.stringify(ok));
    assert.equal(hop.calls.length, 2);

    for (const [tool, args, code] of [
      ['grant_role', { user: 'mallory@example.com', role: 'supervisor' }, 'TOOL_NOT_REGISTERED'],
      ['add_label', { ticket_id: 'T-1', label: 'not-a-label' }, 'INPUT_INVALID'],
    ] as const) {
      hop.calls.length = 0;
      const denied = await client.call(tool, args);
      assert.equal(denied.kind, 'deny', JSON.stringify(denied));
      if (denied.kind === 'deny') {
        assert.equal(denied.code, code);
        assert.equal(typeof denied.callId, 'string');
      }
      assert.equal(hop.calls.length, 1, `${code} is a decision: not retried`);
    }
  });

  test('an approval is a pending result: wait() follows it and completes the call once approved', async () => {
    const { ToolgateClient } = await import('../../src/client/index.js');
    // Retries enough to span a restart on a slow machine (up to about 30 s), and no more.
    const client = new ToolgateClient({
      url: gw.url,
      token: agentKey,
      retry: { attempts: 60, baseDelayMs: 50, maxDelayMs: 500 },
    });
    const args = { to: 'customer@example.com', subject: 'Your refund', body: 'It is on its way.' };
    const first = await client.call('send_email', args);
    assert.equal(first.kind, 'pending_approval', JSON.stringify(first));
    if (first.kind !== 'pending_approval') return;
    assert.equal(first.rendered?.tool, 'send_email');
    assert.deepEqual(first.rendered?.arguments, args);
    const ranBefore = await auditCount('send_email', 'call.pre');

    // The approver decides while the agent waits; the wait outlives a gateway restart too.
    const waiting = first.wait({ pollMs: 25, timeoutMs: 60_000 });
    // Settled as a value, so a failure of the wait surfaces at its assertion, after the restart.
    const outcome = waiting.then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    await gw.stop();
    await gw.start();
    await gw.gateway().admin.approvals.approve(first.approvalId, operator('alice'), {});
    const result = await outcome;
    assert.ok(result.ok, `the wait outlives the restart: ${String(!result.ok && result.e)}`);
    const settled = result.v;
    assert.equal(settled.kind, 'allow', JSON.stringify(settled));
    assert.equal(await auditCount('send_email', 'call.pre'), ranBefore + 1, 'ran once');

    const other = await client.call('send_email', { ...args, subject: 'Second' });
    assert.equal(other.kind, 'pending_approval');
    if (other.kind !== 'pending_approval') return;
    const rejected = other.wait({ pollMs: 25, timeoutMs: 30_000 });
    await gw.gateway().admin.approvals.reject(other.approvalId, operator('alice'), 'not now');
    assert.deepEqual(await rejected, {
      kind: 'not_approved',
      approvalId: other.approvalId,
      status: 'rejected',
      reason: 'not now',
    });
    assert.equal(await auditCount('send_email', 'call.pre'), ranBefore + 1, 'nothing else ran');
  });

  test("an agent reads only its own principal's approvals", async () => {
    const tg = gw.gateway();
    const opsKey = (await tg.keys.issue('ops-bot', setup)).apiKey;
    const rest = async (method: string, path: string, key: string, body?: unknown) => {
      const res = await fetch(`${gw.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const open = async (key: string) =>
      String((await rest('POST', '/v1/sessions', key, {})).body.id);
    const mine = await open(agentKey);
    const sibling = await open(agentKey);
    const opsSession = await open(opsKey);
    const pending = await rest('POST', `/v1/sessions/${mine}/calls`, agentKey, {
      tool: 'send_email',
      arguments: { to: 'a@example.com', subject: 'x', body: 'y' },
    });
    assert.equal(pending.status, 202, JSON.stringify(pending.body));
    const approval = String(pending.body.approval_id);
    const status = (session: string, key: string) =>
      rest('GET', `/v1/sessions/${session}/approvals/${approval}`, key);

    const own = await status(mine, agentKey);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.status, 'pending');
    assert.equal(own.body.tool, 'send_email');
    assert.equal('decided_by' in own.body, false, 'who decides is not the agent’s business');
    // The approval is the principal's: another session of the same key (a client that
    // reconnected) reads it; another key of the same agent is another principal and does not.
    const sibling2 = await status(sibling, agentKey);
    assert.equal(sibling2.status, 200, JSON.stringify(sibling2.body));
    const otherKey = (await tg.keys.issue('support-bot', setup)).apiKey;
    const other = await status(await open(otherKey), otherKey);
    assert.equal(other.status, 404, 'another principal of the same agent: not found');
    assert.equal(other.body.code, 'NOT_FOUND');
    const foreign = await status(mine, opsKey);
    assert.equal(foreign.status, 404, "another agent cannot present this agent's session");
    assert.equal(foreign.body.code, 'SESSION_NOT_FOUND');
    const foreignOwn = await status(opsSession, opsKey);
    assert.equal(foreignOwn.status, 404, 'nor read the approval through its own session');
    assert.equal(foreignOwn.body.code, 'NOT_FOUND');
    const unknown = await rest('GET', `/v1/sessions/${mine}/approvals/apr_nope`, agentKey);
    assert.equal(unknown.status, 404);
    const bad = await rest('GET', `/v1/sessions/${mine}/approvals/${'x'.repeat(101)}`, agentKey);
    assert.equal(bad.status, 400, 'a malformed id is refused by the schema');
    // The route reads; nothing under it decides, whatever the agent sends.
    for (const verb of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const attempt = await fetch(`${gw.url}/v1/sessions/${mine}/approvals/${approval}`, {
        method: verb,
        headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approved' }),
      });
      assert.ok([401, 404].includes(attempt.status), `${verb}: refused (${attempt.status})`);
    }
    const approve = await rest(
      'POST',
      `/v1/sessions/${mine}/approvals/${approval}/approve`,
      agentKey,
      {},
    );
    assert.ok([401, 404].includes(approve.status), `approve: refused (${approve.status})`);
    assert.equal((await status(mine, agentKey)).body.status, 'pending', 'still pending');
    const admin = await status(mine, ADMIN_TOKEN);
    assert.equal(admin.status, 401, 'an agent route: an admin token is no agent key');
  });

  test('the gateway saying the set changed drops the cache: the old set is not served after it', async () => {
    const { ToolgateClient, GatewayUnavailableError } = await import('../../src/client/index.js');
    const client = new ToolgateClient({ url: gw.url, token: agentKey, retry: FAST_RETRY });
    const before = await client.tools();
    assert.ok(before.tools.some((t) => t.name === 'get_order'));
    await gw.gateway().admin.catalog.retire('get_order', '1.0.0', setup);
    const after = await client.tools();
    assert.equal(after.source, 'gateway');
    assert.notEqual(after.revision, before.revision, 'a new validator');
    assert.ok(!after.tools.some((t) => t.name === 'get_order'), 'the retired tool is gone');

    // A client still holding the old set hears it from a refusal, and forgets the set.
    const stale = new ToolgateClient({ url: gw.url, token: agentKey, retry: FAST_RETRY });
    await stale.tools();
    await gw.gateway().admin.catalog.retire('create_ticket', '1.0.0', setup);
    const refused = await stale.call('create_ticket', {
      customer_email: 'c1@example.com',
      subject: 's',
      body: 'b',
    });
    assert.equal(refused.kind, 'deny');
    assert.equal(stale.cacheDrops, 1);
    await gw.stop();
    try {
      await assert.rejects(stale.tools(), GatewayUnavailableError, 'nothing stale is served');
    } finally {
      await gw.start();
    }
  });
});
