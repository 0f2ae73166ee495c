/**
 * @module What `openToolgate` hands a front: the agent API, the admin API, the security-event
 * sink and close, nothing else; no member of either API is the store, the sandbox, the
 * credential broker or the gate; and the two APIs together still run a call end to end.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { codeHash, hostDoctor } from '../../src/api/index.js';
import { CredentialBroker } from '../../src/domain/credentials/index.js';
import { commandCodeHash, SandboxService } from '../../src/execution/sandbox/index.js';
import { Gate } from '../../src/gate/index.js';
import { openToolgate, type Toolgate } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';

const DEMO = new URL('../../demo/catalog.yaml', import.meta.url);
const actor = { id: 'api-test', via: 'library' as const };
const FORBIDDEN_NAMES = new Set(['store', 'db', 'sqlite', 'sandbox', 'credentials', 'gate']);

/** Every member reachable through plain objects (not into service instances' own fields). */
function members(root: object, path: string): { path: string; value: unknown }[] {
  const out: { path: string; value: unknown }[] = [];
  for (const [key, value] of Object.entries(root)) {
    out.push({ path: `${path}.${key}`, value });
    if (
      value !== null &&
      typeof value === 'object' &&
      Object.getPrototypeOf(value) === Object.prototype
    ) {
      out.push(...members(value, `${path}.${key}`));
    }
  }
  return out;
}

for (const backend of backends()) {
  describe(`openToolgate's fronts API on ${backend.name}`, () => {
    let tg: Toolgate;
    let drop: () => Promise<void>;

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      tg = await openToolgate({ db: fresh.url, detectors: false });
    });
    after(async () => {
      await tg.close();
      await drop();
    });

    test('it holds the agent API, the admin API, the security sink and close, and nothing else', () => {
      assert.deepEqual(Object.keys(tg).sort(), ['admin', 'agent', 'close', 'security']);
      assert.deepEqual(Object.keys(tg.agent).sort(), [
        'approvalStatus',
        'authenticate',
        'awaitApproval',
        'callOutcome',
        'discovery',
        'entries',
        'invoke',
        'oauth',
        'requestStates',
        'revisionAnnouncements',
        'revisions',
        'runs',
        'sessions',
        'stepUp',
        'waitingOnApproval',
      ]);
    });

    test('neither API holds the store, the sandbox, the credential broker or the gate', () => {
      for (const { path, value } of [
        ...members(tg.agent, 'agent'),
        ...members(tg.admin, 'admin'),
      ]) {
        const name = path.slice(path.lastIndexOf('.') + 1);
        assert.ok(!FORBIDDEN_NAMES.has(name), `${path} is not handed to a front`);
        for (const internal of [SandboxService, CredentialBroker, Gate]) {
          assert.ok(!(value instanceof internal), `${path} is no ${internal.name}`);
        }
      }
    });

    test('a front cannot reach what the API types leave out: each service shows only its listed members', () => {
      assert.deepEqual(Object.keys(tg.agent.sessions).sort(), [
        'close',
        'evict',
        'exportTools',
        'open',
        'refresh',
        'require',
      ]);
      // A provider's `call` runs an upstream tool without the gate; the audit `writer` appends to
      // the chain; `suspend` ends any session: none is on an API object.
      assert.deepEqual(Object.keys(tg.admin.providers).sort(), [
        'classify',
        'classifyEntry',
        'list',
        'refresh',
        'register',
        'show',
      ]);
      assert.equal('call' in tg.admin.providers, false);
      assert.equal('writer' in tg.admin.audit, false);
      assert.equal('suspend' in tg.agent.sessions, false);
      // Entries: listed; reading one is `invoke` with the URI or name, resolved by the gate.
      assert.deepEqual(Object.keys(tg.agent.entries).sort(), ['list']);
      assert.equal('setChangeRequester' in tg.admin.catalog, false);
      // An operator suspends or closes a session through its own methods, recorded with who did it.
      assert.deepEqual(Object.keys(tg.admin.sessions), ['inspect', 'live', 'suspendBy', 'closeBy']);
      assert.ok(Object.isFrozen(tg.admin) && Object.isFrozen(tg.admin.catalog));
      assert.ok(Object.isFrozen(tg.agent) && Object.isFrozen(tg.agent.sessions));
    });

    test('the admin API configures, the agent API calls through the gate', async () => {
      await tg.admin.config.applyText(readFileSync(DEMO, 'utf8'), actor);
      const session = await tg.agent.sessions.open('support-bot', {});
      const ctx = { agentId: 'support-bot', sessionId: session.id };
      const allowed = await tg.agent.invoke(ctx, 'get_order', { order_id: 'ORD-004211' });
      assert.equal(allowed.kind, 'allow');
      const denied = await tg.agent.invoke(ctx, 'no_such_tool', {});
      assert.equal(denied.kind === 'deny' ? denied.code : denied.kind, 'TOOL_NOT_REGISTERED');
      // The admin's view of the same session, through the admin API only.
      const view = await tg.admin.sessions.inspect(session.id);
      assert.equal(view.id, session.id);
      assert.equal(tg.admin.health.dialect, backend.name);
      await tg.admin.health.ping();
    });
  });
}

test('the host admin services answer without a gateway: doctor and code hash', async () => {
  const drivers = await hostDoctor();
  assert.deepEqual(
    drivers.map((d) => d.driver),
    ['process', 'namespace', 'gvisor'],
  );
  // `process` is always there: it needs nothing beyond the host.
  assert.equal(drivers.find((d) => d.driver === 'process')?.available, true);
  const argv = [process.execPath, '-e', '1'];
  assert.deepEqual(codeHash(argv), { code_hash: commandCodeHash(argv), files: [process.execPath] });
});
