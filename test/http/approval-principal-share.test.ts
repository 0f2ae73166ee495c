/**
 * One principal of an agent (a token user, or the agent's own keys together) holds at most a share
 * of the agent's pending approvals (`userSessionShare`, as for sessions; docs/operations.md
 * "Limits and overload"): past it that principal's next call that needs approval is refused
 * RATE_LIMITED `approval.principal_pending_cap` with Retry-After, audited, on REST and MCP alike,
 * while another user of the agent and the agent's keys still park theirs; the agent's own cap
 * holds as before, and parallel calls cannot slip past the share (attack round 14, Q2). On every
 * backend; JWTs signed here with a local JWKS.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../support/backends.js';
import { noteTool } from '../support/tools.js';
import {
  actForJwt,
  actForToken,
  callRecords,
  connectMcp,
  openWorld,
  type SigningKey,
  signingKeyWithJwks,
  type World,
} from '../support/world.js';

const ISSUER = 'https://idp.example.com';
const AUDIENCE = 'toolgate';
const CAP = 4;
const SHARE = CAP / 2;

for (const backend of backends()) {
  describe(`a principal's share of the agent's pending approvals (${backend.name})`, () => {
    let dir: string;
    let privateKey: SigningKey;
    let world: World;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'toolgate-approval-share-'));
      privateKey = await signingKeyWithJwks(join(dir, 'jwks.json'));
      world = await openWorld({
        backend,
        options: {
          caps: { maxPendingApprovalsPerAgent: CAP },
          jwt: actForJwt(dir, ISSUER, AUDIENCE),
        },
        tools: [noteTool({ to: { type: 'string' } })],
        agents: [
          { id: 'bot', capabilities: ['note:send'] },
          { id: 'bot2', capabilities: ['note:send'] },
        ],
        rest: true,
        inspector: true,
      });
      await world.tg.config.apply(
        ['u1', 'u2', 'u3'].map((id) => ({
          kind: 'User',
          spec: { id, permissions: ['note:send'] },
        })),
        world.admin,
      );
    });

    after(async () => {
      await world.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    function tokenFor(user: string, agent = 'bot'): Promise<string> {
      return actForToken(privateKey, agent, user, ISSUER, AUDIENCE, 'note:send');
    }

    async function open(token: string): Promise<string> {
      const r = await world.send('POST', '/v1/sessions', {}, token);
      assert.equal(r.status, 201, r.text);
      return String(r.body.id);
    }

    function note(session: string, to: string, token: string) {
      return world.send(
        'POST',
        `/v1/sessions/${session}/calls`,
        { tool: 'send_note', arguments: { to } },
        token,
      );
    }

    async function pendingCount(): Promise<number> {
      const r = await world.send('GET', '/v1/approvals?status=pending');
      return (r.body.approvals as unknown[]).length;
    }

    test('one user parks at most her share from several sessions; another user and the keys still park theirs', async () => {
      const u1 = await tokenFor('u1');
      // Attack: u1 parks her share from two sessions, each far under the per-session cap.
      const mine = [await open(u1), await open(await tokenFor('u1'))];
      for (let i = 0; i < SHARE; i++) {
        const r = await note(mine[i % 2] ?? '', `u1-${i}`, u1);
        assert.equal(r.status, 202, r.text);
      }
      const over = await note(mine[0] ?? '', 'u1-over', u1);
      assert.equal(over.status, 429, over.text);
      assert.equal(over.headers.get('retry-after'), '60');
      assert.equal(over.body.code, 'RATE_LIMITED');
      const details = over.body.details as { rule: string; call_id: string };
      assert.equal(details.rule, 'approval.principal_pending_cap');
      assert.match(String(over.body.message), /share/);
      assert.equal(await pendingCount(), SHARE, 'no request was written');
      // Audited as the agent cap's refusal is: a denied call with the rule.
      assert.ok(world.inspector);
      const records = await callRecords(world.tg, world.inspector, details.call_id);
      const denied = records.find((r) => r.kind === 'call.denied');
      assert.equal(denied?.rule, 'approval.principal_pending_cap');
      assert.equal(denied?.code, 'RATE_LIMITED');

      // The MCP front refuses it the same way.
      const mcp = await connectMcp(world.base, await tokenFor('u1'));
      try {
        const res = await mcp.callTool({ name: 'send_note', arguments: { to: 'u1-mcp' } });
        assert.equal(res.isError, true);
        const meta = (res._meta ?? {}) as Record<string, { rule?: string; code?: string }>;
        const verdict = Object.values(meta).find((m) => m?.rule !== undefined);
        assert.equal(verdict?.code, 'RATE_LIMITED');
        assert.equal(verdict?.rule, 'approval.principal_pending_cap');
      } finally {
        await mcp.close();
      }

      // Benign neighbours: another user of the agent, and the agent's own key.
      const u2 = await tokenFor('u2');
      const theirs = await open(u2);
      const r2 = await note(theirs, 'u2-0', u2);
      assert.equal(r2.status, 202, r2.text);
      const key = world.keys.bot ?? '';
      const keyed = await open(key);
      const rk = await note(keyed, 'key-0', key);
      assert.equal(rk.status, 202, rk.text);
      assert.equal(await pendingCount(), CAP);

      // The agent's cap holds as before: u2, under her share, meets it now.
      const full = await note(theirs, 'u2-1', u2);
      assert.equal(full.status, 429, full.text);
      assert.equal(full.headers.get('retry-after'), '60');
      assert.equal((full.body.details as { rule: string }).rule, 'approval.agent_pending_cap');
      assert.equal(await pendingCount(), CAP);
    });

    test('parallel calls of one user from several sessions cannot slip past her share', async () => {
      const u3 = await tokenFor('u3', 'bot2');
      const sessions = [await open(u3), await open(u3), await open(u3), await open(u3)];
      const replies = await Promise.all(
        Array.from({ length: 8 }, (_, i) => note(sessions[i % 4] ?? '', `u3-${i}`, u3)),
      );
      const counts: Record<string, number> = {};
      for (const r of replies) {
        const key =
          r.status === 202 ? '202' : `${r.status} ${(r.body.details as { rule?: string })?.rule}`;
        counts[key] = (counts[key] ?? 0) + 1;
      }
      assert.deepEqual(counts, { '202': SHARE, '429 approval.principal_pending_cap': 8 - SHARE });
    });
  });
}
