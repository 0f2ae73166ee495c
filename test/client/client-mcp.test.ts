/**
 * The client SDK over MCP 2026-07-28 (the real `@modelcontextprotocol/client`, loaded lazily)
 * against a real gateway that is stopped and restarted on the same port under it: tools listed
 * and cached, `list_changed` dropping the cache, the cache serving the last-known set during the
 * outage, a call then failing closed, a call after the restart succeeding on a new connection,
 * and an approval as a pending result whose wait completes the call once, on the sealed state.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GatewayUnavailableError, ToolgateClient } from '../../src/client/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { ApprovalSigner } from '../../src/domain/decisions/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { generateNoteSigner } from '../../src/records/audit/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { operator } from '../support/operators.js';
import { RestartableGateway } from '../support/restartable-gateway.js';

const setup = { id: 'setup', via: 'library' } as const;
const FAST_RETRY = { attempts: 3, baseDelayMs: 20, maxDelayMs: 40 };

describe('the client SDK over MCP rides out a gateway restart', () => {
  let dir: string;
  let gw: RestartableGateway;
  let inspector: Store;
  let agentKey: string;
  const clients: ToolgateClient[] = [];

  async function ran(tool: string): Promise<number> {
    const rows = await inspector.db
      .selectFrom('audit_log')
      .select('seq')
      .where('tool_id', '=', tool)
      .where('kind', '=', 'call.pre')
      .execute();
    return rows.length;
  }

  function client(): ToolgateClient {
    const c = new ToolgateClient({
      transport: 'mcp',
      url: `${gw.url}/mcp`,
      token: agentKey,
      retry: FAST_RETRY,
      requestTimeoutMs: 10_000,
    });
    clients.push(c);
    return c;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-client-mcp-'));
    const db = `sqlite:${join(dir, 'tg.db')}`;
    gw = new RestartableGateway({
      db,
      masterKey: MasterKey.generate(),
      approvalSigner: ApprovalSigner.generate(),
      auditSigner: generateNoteSigner('client-mcp-test').signer,
      executor: demoExecutor(),
    });
    const tg = await gw.start(true);
    agentKey = (await tg.keys.issue('support-bot', setup)).apiKey;
    inspector = await openStore(db);
  });

  after(async () => {
    for (const c of clients) await c.close();
    await gw.stop();
    await inspector.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('cached tools during the outage, a call fails closed, then succeeds after the restart', async () => {
    const c = client();
    const live = await c.tools();
    assert.equal(live.source, 'gateway');
    assert.ok(live.tools.some((t) => t.name === 'add_label'));
    assert.ok(!live.tools.some((t) => t.name === 'grant_role'), "only the agent's own set");
    const args = { ticket_id: 'T-2001', label: 'urgent' };
    const first = await c.call('add_label', args);
    assert.equal(first.kind, 'allow', JSON.stringify(first));
    if (first.kind === 'allow')
      assert.ok(Array.isArray((first.output as { labels?: unknown }).labels));

    const before = await ran('add_label');
    await gw.stop();
    const cached = await c.tools();
    assert.equal(cached.source, 'cache');
    assert.deepEqual(cached.tools, live.tools);
    const failed = await c.call('add_label', args).then(
      () => assert.fail('a call with the gateway away must fail'),
      (err: unknown) => err,
    );
    assert.ok(failed instanceof GatewayUnavailableError, String(failed));
    assert.equal(failed.mayHaveRun, false, 'the connection was refused: nothing was sent');

    await gw.start();
    assert.equal(await ran('add_label'), before, 'nothing ran meanwhile');
    const after = await c.call('add_label', args);
    assert.equal(after.kind, 'allow', JSON.stringify(after));
    assert.equal(await ran('add_label'), before + 1);
    assert.equal((await c.tools()).source, 'gateway');
  });

  test('list_changed drops the cache: the old set is not served through the next outage', async () => {
    const c = client();
    await c.tools();
    const changed = new Promise<void>((resolve) => c.onToolsChanged(resolve));
    await gw.gateway().admin.catalog.deprecate('get_order', '1.0.0', setup, { windowDays: 7 });
    await changed;
    assert.equal(c.cacheDrops, 1);
    await gw.stop();
    try {
      await assert.rejects(c.tools(), GatewayUnavailableError, 'nothing stale is served');
    } finally {
      await gw.start();
    }
  });

  test('an approval is a pending result; wait() completes the call once approved', async () => {
    const c = client();
    const args = { to: 'customer@example.com', subject: 'Refund', body: 'On its way.' };
    const first = await c.call('send_email', args);
    assert.equal(first.kind, 'pending_approval', JSON.stringify(first));
    if (first.kind !== 'pending_approval') return;
    assert.match(first.approvalId, /^apr_/);
    const before = await ran('send_email');
    const waiting = first.wait({ pollMs: 25, timeoutMs: 30_000 });
    await gw.gateway().admin.approvals.approve(first.approvalId, operator('alice'), {});
    const settled = await waiting;
    assert.equal(settled.kind, 'allow', JSON.stringify(settled));
    assert.equal(await ran('send_email'), before + 1, 'ran once');

    const other = await c.call('send_email', { ...args, subject: 'Again' });
    assert.equal(other.kind, 'pending_approval');
    if (other.kind !== 'pending_approval') return;
    const rejected = other.wait({ pollMs: 25, timeoutMs: 30_000 });
    await gw.gateway().admin.approvals.reject(other.approvalId, operator('alice'), 'no');
    const outcome = await rejected;
    assert.equal(outcome.kind, 'not_approved', JSON.stringify(outcome));
    if (outcome.kind === 'not_approved') assert.equal(outcome.status, 'rejected');
    assert.equal(await ran('send_email'), before + 1, 'nothing else ran');
  });
});
