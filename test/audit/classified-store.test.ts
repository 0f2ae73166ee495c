/**
 * Personal data and the audit log (docs/security-model.md), over REST on every backend: calls
 * carrying an e-mail address and an IBAN — allowed, refused by the destination policy (whose
 * message names the recipient), waiting for approval, and an unknown tool named like an address —
 * leave neither value in any row of the append-only log or the event record (the raw rows are
 * scanned), while a reviewer still sees the literal call on the approval desk. An auditor finds
 * the calls in the classified store by the value and matches them to the log's records by their
 * keyed hashes; every read and search is itself recorded, without the value. An approver-only
 * operator is refused, and an auditor may not erase. An admin's erasure by value removes exactly
 * the rows carrying it and `verify` still passes; the retention sweep removes rows older than the
 * period and keeps newer ones, and `verify` still passes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { callRecords, openWorld, restClient, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-classified-store-tests-0123456789';
const EMAIL = 'jane.doe@customer.example';
const OUTSIDE = 'jane.doe@evil.example';
const IBAN = 'DE89370400440532013000';
const HASHED = /^hmac:[0-9a-f]{32}$/;
const DAY = 86_400_000;

for (const backend of backends()) {
  describe(`the audit log keeps no personal data; the classified store forgets it, on ${backend.name}`, () => {
    let tg: Gateway;
    let inspector: Store;
    let world: World;
    let base = '';
    let apiKey = '';
    let auditorToken = '';
    let approverToken = '';
    let now = new Date('2026-03-01T09:00:00.000Z');
    const calls: Record<string, string> = {};

    const send = restClient(() => base, ADMIN_TOKEN);
    const call = async (sid: string, tool: string, args: unknown) => {
      const r = await send('POST', `/v1/sessions/${sid}/calls`, { tool, arguments: args }, apiKey);
      return r;
    };
    const rows = async (table: 'audit_log' | 'events') => {
      await tg.gate.flush();
      return inspector.db.selectFrom(table).selectAll().execute();
    };
    const preOf = async (callId: string) => {
      const [pre] = await callRecords(tg, inspector, callId);
      if (!pre) throw new Error(`no record of ${callId}`);
      return pre;
    };

    before(async () => {
      world = await openWorld({
        backend,
        demo: true,
        keys: ['support-bot'],
        operators: [
          { id: 'ines', roles: ['auditor'], token: true },
          { id: 'alice', roles: ['approver'], token: true },
        ],
        options: { masterKey: MasterKey.generate(), clock: () => now, detectors: false },
        rest: { adminToken: ADMIN_TOKEN },
      });
      ({ tg, base } = world);
      apiKey = world.keys['support-bot'] as string;
      auditorToken = world.tokens.ines as string;
      approverToken = world.tokens.alice as string;
      inspector = await openStore(world.db);

      const sid = (await send('POST', '/v1/sessions', {}, apiKey)).body.id as string;
      const ticket = await call(sid, 'create_ticket', {
        customer_email: EMAIL,
        subject: 'Refund',
        body: `Please refund to ${IBAN}; write to ${EMAIL}`,
      });
      assert.equal(ticket.status, 200, JSON.stringify(ticket.body));
      calls.ticket = ticket.body.call_id as string;
      const refused = await call(sid, 'send_email', { to: OUTSIDE, subject: 'IBAN', body: IBAN });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      calls.refused = (refused.body.details as { call_id: string }).call_id;
      const pending = await call(sid, 'send_email', { to: EMAIL, subject: 'Hello', body: IBAN });
      assert.equal(pending.status, 202, JSON.stringify(pending.body));
      calls.pending = pending.body.call_id as string;
      calls.approval = pending.body.approval_id as string;
      // An unknown tool named like an IBAN: the attempted name is kept, as its keyed hash.
      const probe = await call(sid, IBAN, { email: EMAIL, iban: IBAN });
      assert.equal(probe.status, 404, JSON.stringify(probe.body));
      calls.probe = (probe.body.details as { call_id: string }).call_id;
      // The benign neighbour: a call that carries neither value.
      const other = await call(sid, 'search_tickets', { query: 'printer jam' });
      assert.equal(other.status, 200, JSON.stringify(other.body));
      calls.other = other.body.call_id as string;
    });
    after(async () => {
      await inspector?.close();
      await world?.close();
    });

    test('no row of the audit log or the event record holds the e-mail address or the IBAN', async () => {
      const log = await rows('audit_log');
      const kinds = new Set(log.map((r) => r.kind));
      for (const kind of ['call.pre', 'call.post', 'call.denied', 'call.pending_approval']) {
        assert.ok(kinds.has(kind), `no ${kind} record was written`);
      }
      const text = JSON.stringify([log, await rows('events')]).toLowerCase();
      for (const value of [EMAIL, OUTSIDE, IBAN]) {
        assert.ok(!text.includes(value.toLowerCase()), `${value} is in the append-only log`);
      }
      // The refusal's message named the recipient; the log keeps the message with its hash.
      const denied = await preOf(calls.refused as string);
      assert.equal(denied.kind, 'call.denied');
      assert.match(denied.message ?? '', /hmac:[0-9a-f]{32}/);
      // The reviewer still sees the literal call: the approval's own row is not the log.
      const approval = await send(
        'GET',
        `/v1/approvals/${calls.approval}`,
        undefined,
        approverToken,
      );
      assert.equal(approval.status, 200, JSON.stringify(approval.body));
      assert.ok(JSON.stringify(approval.body).includes(EMAIL));
    });

    test("an auditor finds the calls by a value and matches them to the log's keyed hashes; each read is recorded without the value", async () => {
      const found = await send(
        'POST',
        '/v1/audit/classified/search',
        { value: EMAIL },
        auditorToken,
      );
      assert.equal(found.status, 200, JSON.stringify(found.body));
      const token = found.body.token as string;
      assert.match(token, HASHED);
      const items = found.body.items as { call_id: string; args: unknown; masked: unknown }[];
      assert.deepEqual(
        items.map((i) => i.call_id).sort(),
        [calls.ticket, calls.pending, calls.probe].sort(),
      );
      const pre = await preOf(calls.ticket as string);
      const kept = JSON.parse(pre.args_redacted ?? 'null') as Record<string, unknown>;
      assert.equal(kept.customer_email, token, 'the log shows the value as its keyed hash');
      assert.deepEqual(items.find((i) => i.call_id === calls.ticket)?.masked, kept);

      const read = await send(
        'GET',
        `/v1/audit/classified/calls/${calls.refused}`,
        undefined,
        auditorToken,
      );
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.deepEqual(read.body.args, { to: OUTSIDE, subject: 'IBAN', body: IBAN });
      const events = (await rows('events')).filter((e) => e.action.startsWith('audit.classified'));
      assert.deepEqual(
        events.map((e) => [e.action, e.actor, e.subject]),
        [
          ['audit.classified_searched', 'operator:ines', 'audit:classified'],
          ['audit.classified_read', 'operator:ines', `call:${calls.refused}`],
        ],
      );
    });

    test('an approver-only operator may not read or search it; an auditor may not erase or sweep', async () => {
      for (const [method, path, body] of [
        ['GET', `/v1/audit/classified/calls/${calls.ticket}`, undefined],
        ['POST', '/v1/audit/classified/search', { value: EMAIL }],
      ] as const) {
        const r = await send(method, path, body, approverToken);
        assert.equal(r.status, 403, `${path}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'FORBIDDEN');
        assert.ok(!JSON.stringify(r.body).includes(EMAIL));
      }
      for (const path of ['/v1/audit/classified/erase', '/v1/audit/classified/sweep']) {
        const r = await send('POST', path, { value: EMAIL }, auditorToken);
        assert.equal(r.status, 403, `${path}: ${JSON.stringify(r.body)}`);
      }
      // A selector must name one thing, and a value long enough not to match nearly everything.
      for (const body of [{}, { value: 'abc' }, { value: EMAIL, user: 'u' }]) {
        const r = await send('POST', '/v1/audit/classified/erase', body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.body.code, 'INPUT_INVALID');
      }
    });

    test('erasure by value removes exactly the rows carrying it, is recorded without it, and verify still passes', async () => {
      const erased = await send('POST', '/v1/audit/classified/erase', { value: IBAN });
      assert.equal(erased.status, 200, JSON.stringify(erased.body));
      // The ticket, the refused and the pending send, and the probe carried the IBAN.
      assert.equal(erased.body.erased, 4);
      const left = await inspector.db.selectFrom('call_arguments').select('call_id').execute();
      assert.deepEqual(
        left.map((r) => r.call_id),
        [calls.other],
      );
      const again = await send(
        'POST',
        '/v1/audit/classified/search',
        { value: EMAIL },
        auditorToken,
      );
      assert.deepEqual(again.body.items, []);
      const gone = await send(
        'GET',
        `/v1/audit/classified/calls/${calls.ticket}`,
        undefined,
        auditorToken,
      );
      assert.equal(gone.status, 404);
      const event = (await rows('events')).find((e) => e.action === 'audit.classified_erased');
      assert.ok(event);
      assert.ok(!event.details.includes(IBAN));
      assert.equal(JSON.parse(event.details).erased, 4);
      const report = await tg.admin.audit.verify();
      assert.equal(report.ok, true, JSON.stringify(report.problems));
    });

    test('the retention sweep removes rows older than the period, keeps newer ones, and verify still passes', async () => {
      assert.equal(tg.admin.classified.retentionDays, 30);
      now = new Date(now.getTime() + 31 * DAY);
      const sid = (await send('POST', '/v1/sessions', {}, apiKey)).body.id as string;
      const fresh = await call(sid, 'search_tickets', { query: 'recent' });
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      const swept = await send('POST', '/v1/audit/classified/sweep');
      assert.equal(swept.status, 200, JSON.stringify(swept.body));
      assert.deepEqual(swept.body, { removed: 1, retention_days: 30 });
      const left = await inspector.db.selectFrom('call_arguments').select('call_id').execute();
      assert.deepEqual(
        left.map((r) => r.call_id),
        [fresh.body.call_id],
      );
      const report = await tg.admin.audit.verify();
      assert.equal(report.ok, true, JSON.stringify(report.problems));
    });
  });
}
