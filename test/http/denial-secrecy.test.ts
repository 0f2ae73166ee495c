/**
 * What a denial keeps and tells, over REST and MCP (official SDK client), on every backend: the
 * append-only audit log never holds a secret sent under a secret-named key (in a list, an object,
 * or as a scalar) or pasted as a tool name, while ordinary values keep their shape (as keyed
 * hashes; raw in the classified store); and a tool
 * quarantined after the session opened is answered exactly like an unknown tool
 * (`resolve.not_registered`), while its audit record keeps the real reason for auditors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { connectMcp, openWorld, restClient, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-denial-secrecy-tests-0123456789';
const actor = { id: 'test-admin', via: 'library' } as const;
// Values no redaction pattern knows by shape: only the key names them secret.
const IN_LIST = 'LIST-SECRET-91b2c3d4';
const IN_OBJECT = 'OBJECT-SECRET-5e6f7a8b';
const IN_KEY_LIST = 'KEYLIST-SECRET-0c1d2e3f';
const SCALAR = 'SCALAR-SECRET-4a5b6c7d';
// A tool name shaped like a GitHub token.
const KEY_AS_TOOL = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';

for (const backend of backends()) {
  describe(`denials keep no secret and tell no more on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    let inspector: Store;
    let base = '';
    let apiKey = '';
    const clients: Client[] = [];

    before(async () => {
      world = await openWorld({
        backend,
        demo: true,
        actor,
        keys: ['support-bot'],
        inspector: true,
        rest: { adminToken: ADMIN_TOKEN },
      });
      ({ tg, base } = world);
      inspector = world.inspector as Store;
      apiKey = world.keys['support-bot'] ?? '';
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await world.close();
    });

    const post = restClient(
      () => base,
      () => apiKey,
    );
    const rest = (path: string, body: unknown) => post('POST', path, body);
    const openSession = async () => (await rest('/v1/sessions', {})).body.id as string;
    const auditOf = async (sessionId: string) => {
      await tg.gate.flush();
      return inspector.db
        .selectFrom('audit_log')
        .selectAll()
        .where('session_id', '=', sessionId)
        .orderBy('seq')
        .execute();
    };
    const mcpClient = async () => {
      const client = await connectMcp(base, apiKey);
      clients.push(client);
      return client;
    };

    test('REST: secrets in lists and objects under secret-named keys, and a key sent as the tool name, never reach the audit log', async () => {
      const sid = await openSession();
      const args = {
        token: [IN_LIST],
        password: { v: IN_OBJECT },
        api_key: [{ nested: IN_KEY_LIST }],
        client_secret: SCALAR,
        query: ['refund', { status: 'open' }],
      };
      // Refused by schema: the denial record still carries a redacted copy of the arguments.
      const refused = await rest(`/v1/sessions/${sid}/calls`, {
        tool: 'search_tickets',
        arguments: args,
      });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      const probe = await rest(`/v1/sessions/${sid}/calls`, { tool: KEY_AS_TOOL, arguments: args });
      assert.equal(probe.status, 404);
      assert.equal(probe.body.code, 'TOOL_NOT_REGISTERED');

      const rows = await auditOf(sid);
      assert.equal(rows.length, 2);
      const kept = JSON.stringify(rows);
      for (const secret of [IN_LIST, IN_OBJECT, IN_KEY_LIST, SCALAR, KEY_AS_TOOL]) {
        assert.ok(!kept.includes(secret), `${secret} reached the audit log`);
      }
      const redacted = JSON.parse(rows[0]?.args_redacted ?? 'null');
      const hashed = /^hmac:[0-9a-f]{32}$/;
      // Keys the tool's schema does not declare are the caller's, and hashed like values.
      const token = (v: string) => tg.audit.writer.pseudonyms.token(v);
      assert.deepEqual(redacted[token('token')], '[REDACTED]');
      assert.deepEqual(
        [redacted[token('password')], redacted[token('api_key')], redacted[token('client_secret')]],
        ['[REDACTED]', '[REDACTED]', '[REDACTED]'],
      );
      // The benign neighbour: values under ordinary keys keep their shape (lists and objects
      // too), each value a keyed hash (the log keeps no personal data); the raw value is in the
      // classified store, for auditors.
      assert.match(redacted.query[0], hashed);
      assert.match(redacted.query[1][token('status')], hashed);
      assert.equal(Object.keys(redacted).length, 5);
      const raw = await inspector.db
        .selectFrom('call_arguments')
        .select('args')
        .where('call_id', '=', rows[0]?.call_id ?? '')
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(raw.args).query, ['refund', { status: 'open' }]);
      assert.equal(JSON.parse(rows[1]?.details ?? '{}').attempted, '[REDACTED]');
    });

    test('REST: an ordinary unknown tool name is still recorded as attempted, as its keyed hash', async () => {
      const sid = await openSession();
      const probe = await rest(`/v1/sessions/${sid}/calls`, {
        tool: 'no_such_tool',
        arguments: {},
      });
      assert.equal(probe.status, 404);
      const rows = await auditOf(sid);
      assert.equal(
        JSON.parse(rows[0]?.details ?? '{}').attempted,
        tg.audit.writer.pseudonyms.token('no_such_tool'),
      );
    });

    test('REST and MCP: a tool quarantined after the session opened is "not registered", like an unknown one; the audit keeps why', async () => {
      const sid = await openSession();
      const client = await mcpClient();
      // Both sessions hold add_label; it works before the quarantine.
      const before = await rest(`/v1/sessions/${sid}/calls`, {
        tool: 'add_label',
        arguments: { ticket_id: 'T-1001', label: 'urgent' },
      });
      assert.equal(before.status, 200, JSON.stringify(before.body));
      const viaMcpBefore = (await client.callTool({
        name: 'add_label',
        arguments: { ticket_id: 'T-1001', label: 'urgent' },
      })) as CallToolResult;
      assert.notEqual(viaMcpBefore.isError, true, JSON.stringify(viaMcpBefore));

      await tg.catalog.quarantine('add_label', '1.0.0', actor, 'under review');
      try {
        const quarantined = await rest(`/v1/sessions/${sid}/calls`, {
          tool: 'add_label',
          arguments: { ticket_id: 'T-1001', label: 'urgent' },
        });
        const unknown = await rest(`/v1/sessions/${sid}/calls`, {
          tool: 'no_such_tool',
          arguments: {},
        });
        assert.equal(quarantined.status, 404);
        const shape = (b: Record<string, unknown>) => {
          const { call_id: _ignored, ...rest } = (b.details ?? {}) as Record<string, unknown>;
          return { code: b.code, message: b.message, details: rest };
        };
        assert.deepEqual(shape(quarantined.body), shape(unknown.body));
        assert.equal((quarantined.body.details as { rule: string }).rule, 'resolve.not_registered');
        assert.doesNotMatch(JSON.stringify(quarantined.body), /quarantin|lifecycle/);

        const viaMcp = (await client.callTool({
          name: 'add_label',
          arguments: { ticket_id: 'T-1001', label: 'urgent' },
        })) as CallToolResult;
        assert.equal(viaMcp.isError, true);
        const decision = (viaMcp._meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
        assert.equal(decision.code, 'TOOL_NOT_REGISTERED');
        assert.equal(decision.rule, 'resolve.not_registered');
        assert.doesNotMatch(JSON.stringify(viaMcp), /quarantin|lifecycle/);

        const rows = (await auditOf(sid)).filter((r) => r.kind === 'call.denied');
        const audited = rows.find(
          (r) => r.code === 'TOOL_NOT_REGISTERED' && r.rule !== 'resolve.not_registered',
        );
        assert.equal(audited?.rule, 'lifecycle.quarantined', 'auditors see the real reason');
        assert.equal(
          JSON.parse(audited?.details ?? '{}').attempted,
          tg.audit.writer.pseudonyms.token('add_label'),
        );
      } finally {
        await tg.catalog.release('add_label', '1.0.0', actor, 'reviewed');
      }
    });
  });
}
