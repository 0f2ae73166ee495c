/**
 * The console's audit explorer, record detail, alerts and report downloads on a real gateway, on
 * every backend: search by agent, user, tool, decision, rule and time, cursor-paged; a record with
 * its hash, the latest signed checkpoint and `verify`; raw arguments for auditors only; attacker
 * text in arguments shown only as text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { contextOf, downloadAt, operator, postTargets, render } from './console-harness.js';

const system: Actor = { id: 'test-setup', via: 'library' };
const NOTE = '<script>alert(1)</script> "x" <img src=x onerror=alert(2)>';
const TOKEN = 'hunter2-raw-token-value';

const admin = operator('root', ['admin']);
const audrey = operator('audrey', ['auditor']);
const alice = operator('alice', ['owner'], ['team-a']);

for (const backend of backends()) {
  describe(`console audit pages on ${backend.name}`, () => {
    let tg: Gateway;
    let drop: () => Promise<void>;
    let now = new Date('2026-06-01T10:00:00.000Z');
    const tick = () => {
      now = new Date(now.getTime() + 60_000);
    };

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      tg = await openGateway({
        db: fresh.url,
        clock: () => now,
        executor: demoExecutor().register('test.echo', () => ({ status: 'ok' })),
        detectors: {
          deny_rate: { threshold: 3, window_seconds: 600 },
          new_destination: { enabled: false },
          read_then_egress: { enabled: false },
          egress_volume: { enabled: false },
          off_hours: { enabled: false },
          read_only_write: { enabled: false },
        },
        audit: { checkpointEvery: 1_000_000, checkpointIntervalMs: 3_600_000 },
      });
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'bot-a', owner: 'qa' } },
          { kind: 'Agent', spec: { id: 'bot-b', owner: 'qa' } },
          { kind: 'User', spec: { id: 'ursula@example.com', permissions: ['notes:write'] } },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'take_note',
              name: 'take_note',
              description: 'Store a short note.',
              data_access: 'public',
              required_capabilities: ['notes:write'],
              runtime: { kind: 'inline', handler: 'test.echo' },
              input_schema: {
                type: 'object',
                additionalProperties: false,
                required: ['note'],
                properties: { note: { type: 'string' }, api_token: { type: 'string' } },
              },
            }),
          },
          { kind: 'Grant', spec: { agent: 'bot-a', capabilities: ['notes:write'] } },
          { kind: 'Grant', spec: { agent: 'bot-b', capabilities: ['notes:write'] } },
        ],
        system,
      );
      const a = await tg.sessions.open('bot-a');
      const au = await tg.sessions.open('bot-a', { onBehalfOf: 'ursula@example.com' });
      const b = await tg.sessions.open('bot-b');
      // bot-a: 7 allowed calls a minute apart (pre + post records each), one of them for ursula.
      for (let i = 0; i < 6; i++) {
        tick();
        const d = await tg.gate.invoke({ agentId: 'bot-a', sessionId: a.id }, 'take_note', {
          note: `note ${i}`,
        });
        assert.equal(d.kind, 'allow');
      }
      tick();
      await tg.gate.invoke({ agentId: 'bot-a', sessionId: au.id }, 'take_note', {
        note: NOTE,
        api_token: TOKEN,
      });
      // bot-b: four denials in a row, enough for the deny-rate detector.
      tick();
      for (let i = 0; i < 4; i++) {
        const d = await tg.gate.invoke({ agentId: 'bot-b', sessionId: b.id }, 'no_such_tool', {});
        assert.equal(d.kind, 'deny');
      }
      await tg.gate.flush();
      await tg.detectors?.idle();
      await tg.gate.flush();
      await tg.audit.checkpoint();
    });
    after(async () => {
      await tg.close();
      await drop();
    });

    const seqsOf = (page: string) =>
      [...page.matchAll(/href="\/console\/audit\/(\d+)"/g)].map((m) => Number(m[1]));

    test('search by agent pages newest first with a cursor, nothing repeated, nothing skipped', async () => {
      const all = await tg.admin.auditRecords.search({ agent: 'bot-a' }, { limit: 500 });
      assert.equal(all.items.length, 14, 'seven calls, a pre and a post record each');
      assert.ok(all.items.every((r) => r.agent_id === 'bot-a'));
      const seen: number[] = [];
      let query: Record<string, string> = { agent: 'bot-a', limit: '4' };
      for (let pages = 0; pages < 10; pages++) {
        const page = await render(tg.admin, admin, '/audit', {}, query);
        seen.push(...seqsOf(page));
        const next = /href="\/console\/audit\?([^"]*cursor=[^"]*)"/.exec(page);
        if (!next) break;
        query = Object.fromEntries(new URLSearchParams((next[1] ?? '').replaceAll('&amp;', '&')));
        assert.equal(query.agent, 'bot-a', 'the filter stays on the next page');
        query.limit = '4';
      }
      assert.deepEqual(
        seen,
        all.items.map((r) => r.seq),
      );
      assert.deepEqual(
        [...seen].sort((x, y) => y - x),
        seen,
      );
    });

    test('filters by user, tool, decision, rule and time range, combined', async () => {
      const byUser = await tg.admin.auditRecords.search({ user: 'ursula@example.com' });
      assert.equal(byUser.items.length, 2);
      const denied = await tg.admin.auditRecords.search({ agent: 'bot-b', decision: 'deny' });
      assert.equal(denied.items.length, 4);
      assert.ok(denied.items.every((r) => r.kind === 'call.denied'));
      const rule = denied.items[0]?.rule ?? '';
      assert.ok(rule !== '');
      assert.equal((await tg.admin.auditRecords.search({ rule, agent: 'bot-b' })).items.length, 4);
      assert.equal(
        (await tg.admin.auditRecords.search({ tool: 'take_note', decision: 'deny' })).items.length,
        0,
      );
      // Calls 2 and 3 of bot-a: 10:02 and 10:03, the range [10:02, 10:04).
      const ranged = await tg.admin.auditRecords.search({
        agent: 'bot-a',
        from: '2026-06-01T10:02:00Z',
        to: '2026-06-01T10:04:00Z',
      });
      assert.equal(ranged.items.length, 4);
      assert.ok(ranged.items.every((r) => r.at >= '2026-06-01T10:02' && r.at < '2026-06-01T10:04'));
      const page = await render(tg.admin, admin, '/audit', {}, { user: 'ursula@example.com' });
      assert.equal(seqsOf(page).length, 2);
      await assert.rejects(tg.admin.auditRecords.search({ from: 'yesterday' }), {
        code: 'INPUT_INVALID',
      });
    });

    test('arguments in a record appear only escaped; raw arguments only for an auditor who asks (the read recorded)', async () => {
      const [pre] = (
        await tg.admin.auditRecords.search({ user: 'ursula@example.com', kind: 'call.pre' })
      ).items;
      assert.ok(pre);
      const params = { seq: String(pre.seq) };
      const asAdmin = await render(tg.admin, admin, '/audit/:seq', params, { raw: '1' });
      const asAuditor = await render(tg.admin, audrey, '/audit/:seq', params);
      for (const page of [asAdmin, asAuditor]) {
        assert.ok(!page.includes('<script') && !page.includes('<img'), 'no markup from arguments');
        assert.ok(page.includes('[REDACTED]'), 'the recorded form masks the token');
        // The recorded form keeps no argument value: each is a keyed hash.
        assert.ok(!page.includes('alert(1)'));
        assert.match(page, /hmac:[0-9a-f]{32}/);
      }
      assert.ok(!asAdmin.includes(TOKEN), 'an admin never sees the raw token');
      assert.ok(!asAdmin.includes('Raw arguments'));
      assert.ok(asAuditor.includes('Raw arguments (auditor)'));
      assert.ok(!asAuditor.includes(TOKEN), 'raw arguments are read only when asked for');
      assert.ok(asAuditor.includes(`href="/console/audit/${pre.seq}?raw=1"`));
      const reads = async () =>
        (await tg.admin.events.list({ subject: `call:${pre.call_id}`, limit: 10 })).filter(
          (e) => e.action === 'audit.classified_read',
        ).length;
      assert.equal(await reads(), 0);
      const raw = await render(tg.admin, audrey, '/audit/:seq', params, { raw: '1' });
      assert.ok(!raw.includes('<script') && !raw.includes('<img'), 'no markup from arguments');
      assert.ok(raw.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
      assert.ok(raw.includes(TOKEN), 'the auditor sees the raw arguments');
      assert.equal(await reads(), 1, 'the read is an audit record');
      assert.deepEqual(postTargets(asAuditor), [], 'no action form for an auditor');
    });

    test('a record shows its hash, that it recomputes, its proof under the latest signed checkpoint, and verify on request', async () => {
      const [first] = (await tg.admin.auditRecords.search({ agent: 'bot-a' })).items.slice(-1);
      assert.ok(first);
      const detail = await tg.admin.auditRecords.record(first.seq);
      assert.equal(detail.hashRecomputes, true);
      const params = { seq: String(first.seq) };
      const page = await render(tg.admin, audrey, '/audit/:seq', params);
      assert.ok(page.includes(`<code>${detail.hash}</code>`));
      assert.match(page, /Hash recomputes from the record<\/dt><dd class="ok">yes/);
      const checkpoint = await tg.admin.audit.latestCheckpoint();
      assert.ok(checkpoint);
      assert.ok(page.includes(`root <code>${checkpoint.rootHash}</code>`));
      assert.match(
        page,
        /<dt>In the signed log<\/dt><dd class="ok">signature valid; inclusion proof from this record's hash to the signed root checks/,
      );
      // The whole-log verify reads every record: a link runs it.
      assert.ok(page.includes(`href="/console/audit/${first.seq}?verify=log"`));
      const verified = await render(tg.admin, audrey, '/audit/:seq', params, { verify: 'log' });
      assert.match(verified, /<dt>verify<\/dt><dd class="ok">passes: \d+ records, 1 checkpoints/);
      await assert.rejects(render(tg.admin, audrey, '/audit/:seq', { seq: '999999' }), {
        code: 'AUDIT_RECORD_NOT_FOUND',
      });
    });

    test('a record after the latest checkpoint is chained, not yet signed', async () => {
      const checkpoint = await tg.admin.audit.latestCheckpoint();
      assert.ok(checkpoint);
      const s = await tg.sessions.open('bot-b');
      await tg.gate.invoke({ agentId: 'bot-b', sessionId: s.id }, 'no_such_tool', {});
      await tg.gate.flush();
      const [newest] = (await tg.admin.auditRecords.search({ agent: 'bot-b' }, { limit: 1 })).items;
      assert.ok(newest && newest.seq > checkpoint.treeSize);
      const page = await render(tg.admin, admin, '/audit/:seq', { seq: String(newest.seq) });
      assert.ok(page.includes('after the latest checkpoint'));
    });

    test('the explorer is for admins and auditors only', async () => {
      await assert.rejects(render(tg.admin, alice, '/audit'), /403/);
      await assert.rejects(render(tg.admin, alice, '/alerts'), /403/);
    });

    test('alerts from the detectors are listed with the agent and detector', async () => {
      const page = await render(tg.admin, admin, '/alerts');
      assert.match(page, /<td>deny_rate<\/td><td>[^<]+<\/td><td>bot-b<\/td>/);
      assert.equal(seqsOf(page).length, 1);
    });

    test('reports download as files; the access matrix renders as a grid', async () => {
      const reports = await render(tg.admin, audrey, '/reports');
      assert.ok(reports.includes('href="/console/reports/access-matrix/download?format=csv"'));
      const file = await downloadAt('/reports/:name/download').download(
        contextOf(tg.admin, audrey),
        { name: 'access-matrix' },
        { format: 'csv' },
      );
      assert.equal(file.filename, 'access-matrix.csv');
      assert.match(file.contentType, /text\/csv/);
      assert.match(file.body, /bot-a,take_note,1\.0\.0,true/);
      await assert.rejects(
        downloadAt('/reports/:name/download').download(
          contextOf(tg.admin, audrey),
          { name: '../../etc/passwd' },
          {},
        ),
        { code: 'NOT_FOUND' },
      );
      const matrix = await render(tg.admin, admin, '/access-matrix');
      assert.match(
        matrix,
        /<tr><th>bot-a<\/th><td class="allowed" title="granted: notes:write">allowed<\/td><\/tr>/,
      );
    });
  });
}
