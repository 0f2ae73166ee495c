/**
 * Per-agent caps over REST, on every backend: one agent cannot open sessions without
 * end, nor fill the reviewers' queue with pending approvals through many sessions. An agent at
 * its cap gets 429 with Retry-After and a structured error, nothing is written, and other agents
 * are untouched; freeing a slot (closing a session, a decided approval) lets it in again.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { personalToken } from '../support/world.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const DEMO = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');
const admin = { id: 'test-admin', via: 'library' as const };
const SESSION_CAP = 3;
const APPROVAL_CAP = 2;

for (const backend of backends()) {
  describe(`per-agent caps over REST (${backend.name})`, () => {
    let tg: Gateway;
    let app: FastifyInstance;
    let base: string;
    let drop: () => Promise<void>;
    /** A second handle on the same database, to read what was (not) written. */
    let store: Store;
    const keys: Record<string, string> = {};

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      store = await openStore(fresh.url);
      tg = await openGateway({
        db: fresh.url,
        // One principal (the agent's keys) fills the whole queue here: its share is all of it
        // (approval-principal-share.test.ts pins the share).
        caps: {
          maxSessionsPerAgent: SESSION_CAP,
          maxPendingApprovalsPerAgent: APPROVAL_CAP,
          userSessionShare: 1,
        },
      });
      await tg.config.applyText(DEMO, admin);
      // The demo's restricted and third-party tools are drafts until reviewed.
      await approvePendingReviews(tg.admin);
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'burst-bot', display_name: 'burst', owner: 'qa' } },
          { kind: 'Grant', spec: { agent: 'burst-bot', capabilities: ['docs:read'] } },
          // ops-bot may send email too: the benign neighbour of the approval cap.
          { kind: 'Grant', spec: { agent: 'ops-bot', capabilities: ['email:send'] } },
        ],
        admin,
      );
      for (const id of ['support-bot', 'ops-bot', 'burst-bot'])
        keys[id] = (await tg.keys.issue(id, admin)).apiKey;
      // Deciding an approval takes an approver's account; the admin token never is one.
      await tg.operators.create(BOOTSTRAP_OPERATOR, { id: 'reviewer', roles: ['approver'] });
      keys.reviewer = await personalToken(tg.admin, 'reviewer');
      // Admission is roomy here: this suite is about the caps, not concurrency.
      app = await buildServer(tg, {
        adminToken: ADMIN_TOKEN,
        admission: { maxInFlight: 64, maxInFlightPerCaller: 64 },
      });
      base = await app.listen({ host: '127.0.0.1', port: 0 });
    });

    after(async () => {
      await app.close();
      await tg.close();
      await store.close();
      await drop();
    });

    async function call(agent: string, method: string, path: string, body?: unknown) {
      const res = await fetch(base + path, {
        method,
        headers: {
          authorization: `Bearer ${keys[agent] ?? ADMIN_TOKEN}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
        body: (text ? JSON.parse(text) : null) as any,
      };
    }

    async function openSessions(agentId: string): Promise<number> {
      const rows = await store.db
        .selectFrom('sessions')
        .select('id')
        .where('agent_id', '=', agentId)
        .where('status', '=', 'open')
        .execute();
      return rows.length;
    }

    test('pending approvals are capped per agent across its sessions; others and a freed slot get through', async () => {
      const sessions: string[] = [];
      for (let i = 0; i < 3; i++)
        sessions.push((await call('support-bot', 'POST', '/v1/sessions', {})).body.id);
      const email = (n: number) => ({
        tool: 'send_email',
        arguments: { to: `c${n}@customer.example`, subject: 'Your order', body: 'Shipped.' },
      });
      const pending: string[] = [];
      for (let i = 0; i < APPROVAL_CAP; i++) {
        const r = await call('support-bot', 'POST', `/v1/sessions/${sessions[i]}/calls`, email(i));
        assert.equal(r.status, 202);
        pending.push(r.body.approval_id);
      }
      // Attack: a third session of the same agent, under its own per-session cap, is refused.
      const over = await call('support-bot', 'POST', `/v1/sessions/${sessions[2]}/calls`, email(9));
      assert.equal(over.status, 429);
      assert.equal(over.retryAfter, '60');
      assert.equal(over.body.code, 'RATE_LIMITED');
      assert.equal(over.body.details.rule, 'approval.agent_pending_cap');
      const listed = await call('admin', 'GET', '/v1/approvals?status=pending');
      assert.equal(listed.body.approvals.length, APPROVAL_CAP, 'no request was written');

      // Benign neighbour: another agent's request still reaches the reviewers.
      const opsSession = (await call('ops-bot', 'POST', '/v1/sessions', {})).body.id;
      const ops = await call('ops-bot', 'POST', `/v1/sessions/${opsSession}/calls`, email(5));
      assert.equal(ops.status, 202);

      // A decided request frees the agent's slot.
      const rejected = await call('reviewer', 'POST', `/v1/approvals/${pending[0]}/reject`, {
        reason: 'not now',
      });
      assert.equal(rejected.status, 200);
      const again = await call(
        'support-bot',
        'POST',
        `/v1/sessions/${sessions[2]}/calls`,
        email(9),
      );
      assert.equal(again.status, 202);
      for (const id of sessions) await call('support-bot', 'DELETE', `/v1/sessions/${id}`);
      await call('ops-bot', 'DELETE', `/v1/sessions/${opsSession}`);
    });

    test('open sessions are capped per agent: 429 with Retry-After, nothing written, others unaffected', async () => {
      const ids: string[] = [];
      for (let i = 0; i < SESSION_CAP; i++) {
        const r = await call('support-bot', 'POST', '/v1/sessions', {});
        assert.equal(r.status, 201);
        ids.push(r.body.id);
      }
      const refused = await call('support-bot', 'POST', '/v1/sessions', {});
      assert.equal(refused.status, 429);
      assert.equal(refused.retryAfter, '30');
      assert.deepEqual(refused.body, {
        code: 'LIMIT_REACHED',
        message: refused.body.message,
        details: { limit: 'sessions_per_agent', max: SESSION_CAP, retryAfterSeconds: 30 },
      });
      assert.equal(await openSessions('support-bot'), SESSION_CAP);

      const other = await call('ops-bot', 'POST', '/v1/sessions', {});
      assert.equal(other.status, 201, 'another agent is not affected');

      // Closing one frees a slot.
      assert.equal((await call('support-bot', 'DELETE', `/v1/sessions/${ids[0]}`)).status, 204);
      const reopened = await call('support-bot', 'POST', '/v1/sessions', {});
      assert.equal(reopened.status, 201);
      for (const id of [...ids.slice(1), reopened.body.id])
        await call('support-bot', 'DELETE', `/v1/sessions/${id}`);
      await call('ops-bot', 'DELETE', `/v1/sessions/${other.body.id}`);
    });

    test('parallel opens cannot slip past the cap', async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, () => call('burst-bot', 'POST', '/v1/sessions', {})),
      );
      const statuses = results.map((r) => r.status).sort();
      assert.equal(statuses.filter((s) => s === 201).length, SESSION_CAP);
      assert.equal(statuses.filter((s) => s === 429).length, 12 - SESSION_CAP);
      assert.equal(await openSessions('burst-bot'), SESSION_CAP);
    });
  });
}
