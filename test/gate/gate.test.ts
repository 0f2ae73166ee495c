/**
 * The gate on every backend: the permitted set, each pipeline step's attack and benign neighbour,
 * limits under concurrency, approvals bound to the exact call, and the audit trail.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { confirmDeciders, enrol, operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validSendTool, validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
/** The operator accounts that decide approvals and changes here (all approvers). */
const approver = operator('test-admin');
const aliceOp = operator('alice');
const bobOp = operator('bob');
let totpSecret = '';
let alice = '';
let bob = '';

function expectDeny(d: GateDecision, code: string, rule?: string | RegExp): void {
  assert.equal(d.kind, 'deny', `expected a denial, got ${JSON.stringify(d)}`);
  if (d.kind !== 'deny') return;
  assert.equal(d.code, code, `${d.rule}: ${d.message}`);
  if (typeof rule === 'string') assert.equal(d.rule, rule);
  else if (rule) assert.match(d.rule, rule);
}

function expectAllow(d: GateDecision): unknown {
  assert.equal(d.kind, 'allow', `expected allow, got ${JSON.stringify(d)}`);
  return d.kind === 'allow' ? d.output : undefined;
}

for (const backend of backends()) {
  describe(`gate on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let db: Store['db'];
    let inspector: Store;
    let workspace: string;
    let now = new Date('2026-06-01T10:00:00Z');

    before(async () => {
      workspace = mkdtempSync(join(tmpdir(), 'toolgate-ws-'));
      mkdirSync(join(workspace, 'ws', 'docs'), { recursive: true });
      mkdirSync(join(workspace, 'ws-evil'));
      writeFileSync(join(workspace, 'ws', 'docs', 'readme.md'), 'hello');
      writeFileSync(join(workspace, 'ws-evil', 'secret.txt'), 'secret');
      symlinkSync('/etc', join(workspace, 'ws', 'docs', 'link-out'));
      const executor = demoExecutor()
        .register('test.echo', (a) => ({ status: 'ok', echo: a }))
        .register('test.fetch', (a) => ({ status: String(a.url) }))
        .register('test.read', (a) => ({ status: String(a.path) }))
        .register('test.send', () => ({ id: 'sent' }))
        .register('test.bad_output', () => ({ status: 42 }));
      world = await openWorld({
        backend,
        options: { clock: () => now, executor, masterKey: MasterKey.generate() },
      });
      tg = world.tg;
      totpSecret = (await enrol(tg.admin, approver)).secret;
      alice = (await enrol(tg.admin, aliceOp)).secret;
      bob = (await enrol(tg.admin, bobOp)).secret;
      await confirmDeciders(tg.admin, [aliceOp.id, bobOp.id], now);
      // A second connection to the same database, to look at what the gate wrote.
      inspector = await openStore(world.db);
      db = inspector.db;
      const tools = [
        validTool({
          id: 'invoices',
          name: 'invoices',
          runtime: { kind: 'inline', handler: 'test.echo' },
          rate_limit: { per_run: 3 },
        }),
        validTool({
          id: 'fetch_doc',
          name: 'fetch_doc',
          data_access: 'public',
          description: 'Fetch one documentation page by address.',
          egress: { mode: 'constrained', hosts: ['docs.example.com'] },
          required_capabilities: ['docs:read'],
          runtime: { kind: 'inline', handler: 'test.fetch' },
          input_schema: {
            type: 'object',
            additionalProperties: false,
            required: ['url'],
            properties: { url: { type: 'string', format: 'uri' } },
          },
        }),
        validTool({
          id: 'read_ws',
          name: 'read_ws',
          description: 'Read a file of the workspace.',
          required_capabilities: ['ws:read'],
          runtime: { kind: 'inline', handler: 'test.read' },
          arguments_policy: { path_roots: [join(workspace, 'ws')] },
          input_schema: {
            type: 'object',
            additionalProperties: false,
            required: ['path'],
            properties: { path: { type: 'string', 'x-toolgate': 'path' } },
          },
        }),
        validSendTool({
          id: 'notify',
          name: 'notify',
          runtime: { kind: 'inline', handler: 'test.send' },
        }),
        validSendTool({
          id: 'post_anywhere',
          name: 'post_anywhere',
          description: 'Post a message to any address.',
          egress: { mode: 'unconstrained' },
          required_capabilities: ['web:post'],
          approval: { mode: 'always' },
          runtime: { kind: 'inline', handler: 'test.send' },
        }),
        validTool({
          id: 'pay_refund',
          name: 'pay_refund',
          description: 'Refund an amount to a customer.',
          action_class: 'irreversible',
          access_tier: 'privileged',
          required_capabilities: ['pay:refund'],
          approval: {
            mode: 'conditional',
            conditions: [{ argument: '/amount', op: 'gt', value: 100 }],
          },
          runtime: { kind: 'inline', handler: 'test.echo' },
          input_schema: {
            type: 'object',
            additionalProperties: false,
            required: ['amount'],
            properties: { amount: { type: 'integer' } },
          },
        }),
        validTool({
          id: 'broken_out',
          name: 'broken_out',
          runtime: { kind: 'inline', handler: 'test.bad_output' },
        }),
        validTool({
          id: 'cmd_tool',
          name: 'cmd_tool',
          runtime: { kind: 'command', argv: ['node', 'x.js'] },
        }),
      ];
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'bot', owner: 'qa', budgets: { external_sends: 2 } } },
          { kind: 'Agent', spec: { id: 'boss', owner: 'qa', tier: 'privileged' } },
          { kind: 'Agent', spec: { id: 'outsider', owner: 'qa' } },
          { kind: 'User', spec: { id: 'reader@example.com', permissions: ['billing:read'] } },
          ...tools.map((spec) => ({ kind: 'Tool', spec })),
          {
            kind: 'Grant',
            spec: {
              agent: 'bot',
              capabilities: [
                'billing:read',
                'docs:read',
                'ws:read',
                'notify:send',
                'web:post',
                'pay:refund',
              ],
            },
          },
          { kind: 'Grant', spec: { agent: 'boss', capabilities: ['pay:refund', 'billing:read'] } },
          { kind: 'Grant', spec: { agent: 'outsider', capabilities: ['docs:read'] } },
        ],
        admin,
      );
      await approvePendingReviews(tg);
      // The irreversible refund tool and the grants that unlock it wait for two approvers.
      const pending = await tg.changes.list('pending');
      assert.equal(pending.length, 3, JSON.stringify(pending.map((c) => c.subject)));
      for (const change of pending) {
        now = new Date(now.getTime() + 30_000);
        assert.equal(
          (await tg.changes.approve(change.id, aliceOp, totpAt(alice, now))).status,
          'pending',
        );
        assert.equal(
          (await tg.changes.approve(change.id, bobOp, totpAt(bob, now))).status,
          'applied',
        );
      }
    });
    after(async () => {
      await inspector.close();
      await world.close();
      rmSync(workspace, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    const open = async (agentId = 'bot', options = {}) => {
      const s = await tg.sessions.open(agentId, options);
      return { session: s, ctx: { agentId, sessionId: s.id } };
    };

    describe('the permitted set', () => {
      test('grants ∩ tier, with unconstrained egress withheld beside private reads, reason visible to admins', async () => {
        const { session } = await open();
        const names = session.tools.map((t) => t.name).sort();
        assert.deepEqual(
          names,
          ['broken_out', 'cmd_tool', 'fetch_doc', 'invoices', 'notify', 'read_ws'].sort(),
        );
        assert.ok(!names.includes('pay_refund'), 'privileged tool offered to a restricted agent');
        const inspected = await tg.sessions.inspect(session.id);
        assert.equal(inspected.withheld[0]?.id, 'post_anywhere');
        assert.match(inspected.withheld[0]?.reason ?? '', /toxic combination/);
      });

      test('a session on behalf of a read-only user holds only what the user may do', async () => {
        const { session } = await open('bot', { onBehalfOf: 'reader@example.com' });
        assert.deepEqual(session.tools.map((t) => t.name).sort(), [
          'broken_out',
          'cmd_tool',
          'invoices',
        ]);
        await assert.rejects(tg.sessions.open('bot', { onBehalfOf: 'ghost@example.com' }), {
          code: 'USER_NOT_FOUND',
        });
      });

      test('without a private-data tool the unconstrained egress tool is offered', async () => {
        await tg.config.apply(
          [
            { kind: 'Agent', spec: { id: 'poster', owner: 'qa' } },
            { kind: 'Grant', spec: { agent: 'poster', capabilities: ['web:post'] } },
          ],
          admin,
        );
        await approvePendingReviews(tg);
        const { session } = await open('poster');
        assert.deepEqual(
          session.tools.map((t) => t.name),
          ['post_anywhere'],
        );
      });

      test('exports as MCP, OpenAI and Anthropic tools', async () => {
        const { session } = await open();
        const mcp = (await tg.sessions.exportTools(session.id, 'bot', 'mcp')) as {
          name: string;
          inputSchema: unknown;
          annotations: { readOnlyHint: boolean };
        }[];
        const inv = mcp.find((t) => t.name === 'invoices');
        assert.ok(inv?.inputSchema && inv.annotations.readOnlyHint);
        const openai = (await tg.sessions.exportTools(session.id, 'bot', 'openai')) as {
          type: string;
          function: { name: string; parameters: unknown };
        }[];
        assert.ok(openai.every((t) => t.type === 'function' && t.function.parameters));
        const anthropic = (await tg.sessions.exportTools(session.id, 'bot', 'anthropic')) as {
          name: string;
          input_schema: unknown;
        }[];
        assert.ok(anthropic.every((t) => t.input_schema));
        await assert.rejects(tg.sessions.exportTools(session.id, 'outsider', 'mcp'), {
          code: 'SESSION_NOT_FOUND',
        });
      });
    });

    describe('pipeline steps', () => {
      test('unknown, withheld and other agents\' tools are all "not registered", and audited', async () => {
        const { ctx } = await open();
        for (const name of ['no_such_tool', 'post_anywhere', 'pay_refund', '../invoices', 42]) {
          expectDeny(await tg.gate.invoke(ctx, name, {}), 'TOOL_NOT_REGISTERED');
        }
        const denied = await auditOf(ctx.sessionId);
        assert.ok(denied.filter((r) => r.code === 'TOOL_NOT_REGISTERED').length >= 5);
        // The attempted name is the caller's value: the log keeps its keyed hash, never the text.
        const attempted = tg.audit.writer.pseudonyms.token('no_such_tool');
        assert.ok(denied.some((r) => JSON.parse(r.details).attempted === attempted));
        assert.ok(denied.every((r) => !r.details.includes('no_such_tool')));
        expectAllow(await tg.gate.invoke(ctx, 'invoices', { invoice: 'INV-1' }));
      });

      test('schema: extra properties, wrong types, non-objects and deep nesting are refused', async () => {
        const { ctx } = await open();
        expectDeny(
          await tg.gate.invoke(ctx, 'invoices', { invoice: 'INV-1', admin: true }),
          'INPUT_INVALID',
          'schema.additionalProperties',
        );
        expectDeny(
          await tg.gate.invoke(ctx, 'invoices', { invoice: 7 }),
          'INPUT_INVALID',
          'schema.type',
        );
        expectDeny(
          await tg.gate.invoke(ctx, 'invoices', ['INV-1']),
          'INPUT_INVALID',
          'schema.type',
        );
        expectDeny(
          await tg.gate.invoke(ctx, 'invoices', { invoice: 'x'.repeat(41) }),
          'INPUT_INVALID',
        );
        let deep: unknown = 'x';
        for (let i = 0; i < 100; i++) deep = { a: deep };
        expectDeny(
          await tg.gate.invoke(ctx, 'invoices', { invoice: 'a', currency: deep }),
          'INPUT_INVALID',
          'schema.depth',
        );
        expectDeny(
          await tg.gate.invoke(ctx, 'invoices', { invoice: 'a'.repeat(70_000) }),
          'INPUT_INVALID',
          /^size\./,
        );
      });

      test('a grant revoked after the session opened stops the next call', async () => {
        const { ctx } = await open();
        expectAllow(await tg.gate.invoke(ctx, 'fetch_doc', { url: 'https://docs.example.com/a' }));
        await tg.agents.revoke('bot', ['docs:read'], admin);
        expectDeny(
          await tg.gate.invoke(ctx, 'fetch_doc', { url: 'https://docs.example.com/a' }),
          'GRANT_MISSING',
        );
        await tg.config.apply(
          [{ kind: 'Grant', spec: { agent: 'bot', capabilities: ['docs:read'] } }],
          admin,
        );
        await approvePendingReviews(tg);
      });

      test('URL arguments: exact host, https only, no IP literals; the tool gets the canonical URL', async () => {
        const { ctx } = await open();
        for (const url of [
          'http://docs.example.com/',
          'https://docs.example.com.evil.example/',
          'https://2130706433/',
          'https://docs.example.com@evil.example/',
          'https://docs.example.com:8443/',
        ]) {
          expectDeny(await tg.gate.invoke(ctx, 'fetch_doc', { url }), 'POLICY_DENIED', /^url\./);
        }
        assert.deepEqual(
          expectAllow(
            await tg.gate.invoke(ctx, 'fetch_doc', { url: 'https://docs.example.com/guide?x=1' }),
          ),
          {
            status: 'https://docs.example.com/guide?x=1',
          },
        );
      });

      test('path arguments: contained by realpath; traversal, symlink escape and sibling prefix refused', async () => {
        const { ctx } = await open();
        for (const path of [
          '../ws-evil/secret.txt',
          'docs/link-out/passwd',
          '/etc/passwd',
          'docs/\u0000x',
        ]) {
          expectDeny(await tg.gate.invoke(ctx, 'read_ws', { path }), 'POLICY_DENIED', /^path\./);
        }
        const out = expectAllow(
          await tg.gate.invoke(ctx, 'read_ws', { path: 'docs/readme.md' }),
        ) as { status: string };
        assert.ok(
          out.status.endsWith('/ws/docs/readme.md') && out.status.startsWith('/'),
          'the tool receives the resolved real path',
        );
      });

      test('retired and quarantined tools are refused in open sessions; deprecated ones warn', async () => {
        await tg.catalog.register(
          validTool({
            id: 'old_tool',
            name: 'old_tool',
            runtime: { kind: 'inline', handler: 'test.echo' },
          }),
          admin,
        );
        const { ctx } = await open('bot', { ttlSeconds: 7 * 86_400 });
        await tg.catalog.deprecate('old_tool', '1.0.0', admin, { windowDays: 1 });
        const warned = await tg.gate.invoke(ctx, 'old_tool', { invoice: 'a' });
        assert.equal(warned.kind, 'allow');
        assert.match(warned.kind === 'allow' ? (warned.warnings[0] ?? '') : '', /deprecated/);
        now = new Date(now.getTime() + 2 * 86_400_000);
        expectDeny(await tg.gate.invoke(ctx, 'old_tool', { invoice: 'a' }), 'TOOL_RETIRED');
        await tg.catalog.quarantine('invoices', '1.0.0', admin, 'test');
        expectDeny(await tg.gate.invoke(ctx, 'invoices', { invoice: 'a' }), 'TOOL_NOT_REGISTERED');
        await tg.catalog.release('invoices', '1.0.0', admin, 'test');
      });

      test('a command tool runs in its sandbox and its failure is denied; a bad result is withheld', async () => {
        const { ctx } = await open();
        // `node x.js`: no such script inside the sandbox (the sandbox suites cover the runtime).
        expectDeny(
          await tg.gate.invoke(ctx, 'cmd_tool', { invoice: 'a' }),
          'EXECUTION_FAILED',
          'execute.exit_nonzero',
        );
        expectDeny(
          await tg.gate.invoke(ctx, 'broken_out', { invoice: 'a' }),
          'OUTPUT_INVALID',
          'result.schema',
        );
      });
    });

    describe('flow, limits and budgets', () => {
      test('after a private-data read, unconstrained egress is refused (runtime toxic flow)', async () => {
        await tg.config.apply(
          [
            { kind: 'Agent', spec: { id: 'mixer', owner: 'qa' } },
            { kind: 'Grant', spec: { agent: 'mixer', capabilities: ['web:post'] } },
          ],
          admin,
        );
        await approvePendingReviews(tg);
        const { ctx } = await open('mixer');
        // The set has no private tool, so egress is offered; mark a private read as happened.
        await sql`update sessions set private_data_read = 1 where id = ${ctx.sessionId}`.execute(
          db,
        );
        expectDeny(
          await tg.gate.invoke(ctx, 'post_anywhere', { to: 'a@b.example', text: 'x' }),
          'TOXIC_FLOW',
        );
        const fresh = await open('mixer');
        const pending = await tg.gate.invoke(fresh.ctx, 'post_anywhere', {
          to: 'a@b.example',
          text: 'x',
        });
        assert.equal(
          pending.kind,
          'pending_approval',
          'the benign neighbour reaches the approval step',
        );
      });

      test('50 concurrent calls race for 3 per-run slots: exactly 3 are admitted', async () => {
        const { ctx } = await open();
        const results = await Promise.all(
          Array.from({ length: 50 }, () => tg.gate.invoke(ctx, 'invoices', { invoice: 'INV-9' })),
        );
        assert.equal(results.filter((r) => r.kind === 'allow').length, 3);
        assert.ok(
          results
            .filter((r) => r.kind === 'deny')
            .every((r) => r.kind === 'deny' && r.rule === 'rate.per_run'),
        );
        const other = await open('bot', { runId: 'another-run' });
        expectAllow(await tg.gate.invoke(other.ctx, 'invoices', { invoice: 'INV-9' }));
      });

      test('the external-send budget hard-fails, also under concurrency', async () => {
        const { ctx } = await open();
        const calls = Array.from({ length: 6 }, (_, i) => ({
          to: `c${i}@customer.example`,
          text: 'hi',
        }));
        const pending = await Promise.all(calls.map((a) => tg.gate.invoke(ctx, 'notify', a)));
        for (const p of pending)
          if (p.kind === 'pending_approval') await tg.approvals.approve(p.approvalId, approver);
        const results = await Promise.all(calls.map((a) => tg.gate.invoke(ctx, 'notify', a)));
        assert.equal(results.filter((r) => r.kind === 'allow').length, 2);
        assert.ok(
          results
            .filter((r) => r.kind === 'deny')
            .every((r) => r.kind === 'deny' && r.code === 'BUDGET_EXCEEDED'),
        );
      });

      test('idempotency: same key and arguments → the first result; other arguments → refused', async () => {
        const { ctx } = await open('boss');
        const first = await tg.gate.invoke(
          ctx,
          'invoices',
          { invoice: 'I-1' },
          { idempotencyKey: 'k-1' },
        );
        const again = await tg.gate.invoke(
          ctx,
          'invoices',
          { invoice: 'I-1' },
          { idempotencyKey: 'k-1' },
        );
        assert.equal(first.kind, 'allow');
        assert.equal(
          again.kind === 'allow' && first.kind === 'allow' ? again.callId : '',
          first.kind === 'allow' ? first.callId : 'x',
        );
        expectDeny(
          await tg.gate.invoke(ctx, 'invoices', { invoice: 'I-2' }, { idempotencyKey: 'k-1' }),
          'IDEMPOTENCY_CONFLICT',
        );
      });
    });

    describe('idempotency keys expire', () => {
      test('after 24 h a key is free again (other arguments run), and the sweep removes it', async () => {
        const { ctx } = await open('boss');
        const first = await tg.gate.invoke(
          ctx,
          'invoices',
          { invoice: 'TTL-1' },
          { idempotencyKey: 'ttl-key' },
        );
        expectAllow(first);
        now = new Date(now.getTime() + 23 * 3_600_000);
        const within = await open('boss');
        expectDeny(
          await tg.gate.invoke(
            within.ctx,
            'invoices',
            { invoice: 'TTL-2' },
            { idempotencyKey: 'ttl-key' },
          ),
          'IDEMPOTENCY_CONFLICT',
        );
        now = new Date(now.getTime() + 2 * 3_600_000);
        const later = await open('boss');
        const fresh = await tg.gate.invoke(
          later.ctx,
          'invoices',
          { invoice: 'TTL-2' },
          { idempotencyKey: 'ttl-key' },
        );
        expectAllow(fresh);
        assert.notEqual(
          fresh.kind === 'allow' ? fresh.callId : '',
          first.kind === 'allow' ? first.callId : '',
        );
        // The new call holds the key now: a third spelling is refused, the sweep leaves it.
        expectDeny(
          await tg.gate.invoke(
            later.ctx,
            'invoices',
            { invoice: 'TTL-3' },
            { idempotencyKey: 'ttl-key' },
          ),
          'IDEMPOTENCY_CONFLICT',
        );
        now = new Date(now.getTime() + 25 * 3_600_000);
        assert.ok((await tg.gate.sweep()).idempotencyKeys >= 1);
        const left = await db
          .selectFrom('idempotency')
          .select('key')
          .where('key', 'like', '%ttl-key')
          .execute();
        assert.deepEqual(left, []);
      });
    });

    describe('approvals', () => {
      test('an approved call runs once, for exactly the approved arguments', async () => {
        const { ctx } = await open('boss');
        expectAllow(await tg.gate.invoke(ctx, 'pay_refund', { amount: 50 }));
        const p = await tg.gate.invoke(ctx, 'pay_refund', { amount: 500 });
        assert.equal(p.kind, 'pending_approval');
        if (p.kind !== 'pending_approval') return;
        assert.deepEqual(p.rendered.arguments, { amount: 500 });
        assert.equal((await tg.approvals.get(p.approvalId)).rendered.tool, 'pay_refund');
        // irreversible: the approver's second factor is required, and a wrong one refused
        await assert.rejects(tg.approvals.approve(p.approvalId, approver), {
          code: 'INPUT_INVALID',
        });
        await assert.rejects(tg.approvals.approve(p.approvalId, approver, { totp: '000000' }), {
          code: 'INPUT_INVALID',
        });
        await assert.rejects(
          tg.approvals.approve(p.approvalId, operator('no-factor'), { totp: '123456' }),
          {
            code: 'FORBIDDEN',
          },
        );
        now = new Date(now.getTime() + 60_000);
        await tg.approvals.approve(p.approvalId, approver, { totp: totpAt(totpSecret, now) });
        // changed arguments do not run on this approval
        assert.equal(
          (await tg.gate.invoke(ctx, 'pay_refund', { amount: 501 })).kind,
          'pending_approval',
        );
        // another principal of the same agent (another credential) does not either
        const keyed = { kind: 'agent' as const, agentId: 'boss', credential: 'key:other-key' };
        const elsewhere = await tg.sessions.open(keyed);
        const theirs = await tg.gate.invoke(
          { principal: keyed, sessionId: elsewhere.id },
          'pay_refund',
          { amount: 500 },
        );
        assert.equal(theirs.kind, 'pending_approval');
        assert.notEqual((theirs as { approvalId: string }).approvalId, p.approvalId);
        // The approval is the principal's, not the session's: another session of the same
        // principal (a client that reconnected) runs the call on it.
        const other = await open('boss');
        expectAllow(await tg.gate.invoke(other.ctx, 'pay_refund', { amount: 500 }));
        // replay: the approval is consumed
        assert.equal(
          (await tg.gate.invoke(ctx, 'pay_refund', { amount: 500 })).kind,
          'pending_approval',
        );
        assert.equal((await tg.approvals.get(p.approvalId)).status, 'consumed');
      });

      test('a rejected or decided approval cannot be approved again', async () => {
        const { ctx } = await open('boss');
        const p = await tg.gate.invoke(ctx, 'pay_refund', { amount: 700 });
        assert.equal(p.kind, 'pending_approval');
        if (p.kind !== 'pending_approval') return;
        await tg.approvals.reject(p.approvalId, approver, 'no');
        await assert.rejects(tg.approvals.approve(p.approvalId, approver), {
          code: 'APPROVAL_STATE',
        });
      });
    });

    describe('audit', () => {
      test('an allowed call has a durable pre record before its post record; secrets are masked; raw arguments kept apart', async () => {
        const { ctx } = await open();
        expectAllow(
          await tg.gate.invoke(ctx, 'invoices', { invoice: 'ghp_abcdefghijklmnopqrstuvwxyz0123' }),
        );
        const rows = (await auditOf(ctx.sessionId)).filter((r) => r.tool_id === 'invoices');
        assert.deepEqual(
          rows.map((r) => r.kind),
          ['call.pre', 'call.post'],
        );
        assert.equal(rows[0]?.call_id, rows[1]?.call_id);
        assert.match(rows[0]?.args_hash ?? '', /^sha256:/);
        assert.doesNotMatch(rows[0]?.args_redacted ?? '', /ghp_/);
        const raw = await db
          .selectFrom('call_arguments')
          .selectAll()
          .where('call_id', '=', rows[0]?.call_id ?? '')
          .executeTakeFirst();
        assert.match(raw?.args ?? '', /ghp_/);
        await assert.rejects(sql`update audit_log set decision = 'allow'`.execute(db));
      });
    });

    describe('housekeeping', () => {
      test('rate counters whose session or window has ended are swept; live ones stay', async () => {
        const { ctx } = await open();
        expectAllow(await tg.gate.invoke(ctx, 'invoices', { invoice: 'SWEEP-1' }));
        const count = async () =>
          Number(
            (
              await db
                .selectFrom('rate_counters')
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirst()
            )?.n ?? 0,
          );
        await tg.gate.sweep(); // whatever earlier tests left behind and let expire
        const live = await count();
        assert.ok(live >= 1, "this session's counter is live and stays");
        assert.equal((await tg.gate.sweep()).rateCounters, 0);
        now = new Date(now.getTime() + 8 * 86_400_000);
        assert.equal((await tg.gate.sweep()).rateCounters, live);
        assert.equal(await count(), 0);
      });
    });

    async function auditOf(sessionId: string) {
      // Result records are group-committed after the call returns; wait for them.
      await tg.gate.flush();
      return db
        .selectFrom('audit_log')
        .selectAll()
        .where('session_id', '=', sessionId)
        .orderBy('seq')
        .execute();
    }
  });
}
