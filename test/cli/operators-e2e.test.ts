/**
 * The operator CLI end to end with personal tokens: the bootstrap operator creates the first
 * admin; that admin (TOOLGATE_TOKEN) creates approvers alice and bob, enrols their second factors
 * and issues their tokens; `operators confirm --totp` makes them count as two people (root, the
 * genesis admin, confirms alice; alice confirms bob; the bootstrap token, root for itself and root
 * for bob are refused); an irreversible tool goes live by alice's security review and both
 * approvers' four eyes (`tools review`, `changes approve --totp`), its grant by four eyes too;
 * an agent's call waits and `approvals approve --totp` with alice's token lets the retry run
 * once, recorded as operator:alice. Without a token (the bootstrap operator) and with an admin
 * who is no approver, deciding and reviewing are refused with a message that says why. The built
 * CLI in real child processes on a real SQLite file; the agent's calls through a gateway opened
 * on the same database and data folder.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { totpStep } from '../../src/domain/decisions/totp.js';
import { approvalSigner } from '../../src/edge/cli/runtime-files.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { cleanEnv, ensureBuilt, folderArgs } from '../support/cli.js';

interface Run {
  code: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON output is asserted field by field
  json: any;
  stderr: string;
}

const WIRE = `kind: Agent
spec: { id: payer, owner: payments, tier: privileged }
---
kind: Tool
spec:
  id: wire
  version: 1.0.0
  name: wire
  description: Send a wire transfer of an amount to an account.
  owner: payments
  action_class: irreversible
  data_access: private
  egress: { mode: none }
  access_tier: restricted
  provenance: internal
  required_capabilities: [payments:wire]
  runtime: { kind: inline, handler: test.wire }
  input_schema:
    type: object
    additionalProperties: false
    required: [to, cents]
    properties:
      to: { type: string, maxLength: 40 }
      cents: { type: integer, minimum: 1, maximum: 100000 }
  output_schema:
    type: object
    properties: { status: { type: string } }
`;

describe('the operator CLI decides and reviews as the personal token it runs with', () => {
  let dir = '';
  const tokens: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  const lastStep: Record<string, number> = {};

  const run = (args: readonly string[], who?: string): Promise<Run> =>
    new Promise((resolve) => {
      const env = { ...cleanEnv(), ...(who ? { TOOLGATE_TOKEN: tokens[who] } : {}) };
      execFile(
        process.execPath,
        [...folderArgs(dir), '--json', ...args],
        { cwd: dir, env },
        (err, stdout, stderr) => {
          let json: unknown = stdout;
          try {
            json = JSON.parse(stdout);
          } catch {}
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, json, stderr });
        },
      );
    });

  /**
   * A fresh code of `who`, each for a later time step than the last (a code is single-use), and
   * one the gateway still accepts when the CLI process checks it a moment later (a command takes
   * well under a second): the step before the current one only while the current window has 5 s
   * left; when the accepted steps are used up, the next window is waited for.
   */
  const code = async (who: string): Promise<string> => {
    const secret = secrets[who];
    assert.ok(secret, `no second factor for ${who}`);
    for (;;) {
      const now = totpStep(new Date());
      const intoWindow = (Date.now() / 1000) % 30;
      const lowest = intoWindow < 25 ? now - 1 : now;
      const step = Math.max(lowest, (lastStep[who] ?? -Infinity) + 1);
      if (step <= now + 1) {
        lastStep[who] = step;
        return totpAt(secret, new Date(step * 30_000 + 15_000));
      }
      await new Promise((r) => setTimeout(r, (30 - intoWindow) * 1000 + 100));
    }
  };

  /**
   * A valid code of `who` for an act refused before any code is spent (the refusal is the point):
   * the current step's, not recorded as used.
   */
  const unspent = (who: string): string => {
    const secret = secrets[who];
    assert.ok(secret, `no second factor for ${who}`);
    return totpAt(secret, new Date());
  };

  const fourEyes = async (changeId: string) => {
    const a = await run(['changes', 'approve', changeId, '--totp', await code('alice')], 'alice');
    assert.equal(a.code, 0, JSON.stringify(a.json));
    assert.equal(a.json.status, 'pending');
    const b = await run(['changes', 'approve', changeId, '--totp', await code('bob')], 'bob');
    assert.equal(b.code, 0, JSON.stringify(b.json));
    assert.equal(b.json.status, 'applied');
    assert.deepEqual([...b.json.approvers].sort(), ['operator:alice', 'operator:bob']);
  };

  before(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-operators-e2e-'));
    const root = await run(['operators', 'create', 'root', '--roles', 'admin']);
    assert.equal(root.code, 0, JSON.stringify(root.json));
    const issue = (id: string, who?: string) =>
      run(['operators', 'token', 'issue', '--for', id, '--name', 'e2e', '--days', '1'], who);
    const rootToken = await issue('root');
    assert.equal(rootToken.code, 0, JSON.stringify(rootToken.json));
    tokens.root = rootToken.json.token;
    for (const id of ['alice', 'bob']) {
      const made = await run(['operators', 'create', id, '--roles', 'approver'], 'root');
      assert.equal(made.code, 0, JSON.stringify(made.json));
      assert.equal(made.json.created_by, 'operator:root');
      const enrolled = await run(['approvers', 'enroll', id], 'root');
      assert.equal(enrolled.code, 0, JSON.stringify(enrolled.json));
      secrets[id] = enrolled.json.secret;
      const t = await issue(id, 'root');
      assert.equal(t.code, 0, JSON.stringify(t.json));
      tokens[id] = t.json.token;
    }
    // Four eyes are two people: alice and bob, set up by root, count in a two-approver change
    // only once confirmed. root, the genesis admin (set up through the bootstrap token, the only
    // confirmed decider), confirms alice; from then on root confirms nobody it set up, and alice,
    // the second confirmed account, confirms bob.
    const rootFactor = await run(['approvers', 'enroll', 'root']);
    assert.equal(rootFactor.code, 0, JSON.stringify(rootFactor.json));
    secrets.root = rootFactor.json.secret;
    const unconfirmed = await run(['operators', 'show', 'bob'], 'root');
    assert.equal(unconfirmed.json.confirmed, false, JSON.stringify(unconfirmed.json));
    assert.equal(unconfirmed.json.set_up_by, 'operator:root');
    const bootstrap = await run(['operators', 'confirm', 'alice', '--totp', '123456']);
    assert.equal(bootstrap.code, 3);
    assert.equal(bootstrap.json.error.code, 'FORBIDDEN');
    assert.match(bootstrap.json.error.message, /bootstrap admin token confirms nobody/);
    const alice = await run(
      ['operators', 'confirm', 'alice', '--totp', await code('root')],
      'root',
    );
    assert.equal(alice.code, 0, JSON.stringify(alice.json));
    assert.equal(alice.json.confirmed_by, 'operator:root');
    const self = await run(['operators', 'confirm', 'root', '--totp', unspent('root')], 'root');
    assert.equal(self.code, 3);
    assert.match(self.json.error.message, /cannot confirm their own account/);
    const byRoot = await run(['operators', 'confirm', 'bob', '--totp', unspent('root')], 'root');
    assert.equal(byRoot.code, 3, JSON.stringify(byRoot.json));
    assert.equal(byRoot.json.error.code, 'FORBIDDEN');
    assert.match(byRoot.json.error.message, /set up bob .* cannot confirm it/);
    const bob = await run(['operators', 'confirm', 'bob', '--totp', await code('alice')], 'alice');
    assert.equal(bob.code, 0, JSON.stringify(bob.json));
    assert.equal(bob.json.confirmed_by, 'operator:alice');
    const listed = await run(['operators', 'list'], 'root');
    assert.deepEqual(
      (listed.json.operators as { id: string; confirmed: boolean }[]).map((o) => [
        o.id,
        o.confirmed,
      ]),
      [
        ['alice', true],
        ['bob', true],
        ['root', true],
      ],
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

  test('tools review with alice’s token; the bootstrap operator and an admin who is no approver are refused', async () => {
    const file = join(dir, 'wire.yaml');
    writeFileSync(file, WIRE);
    // reg, another admin root sets up, registers it: alice, set up and confirmed by root, is a
    // person apart from reg, not from root (attack round 12, N1).
    const made = await run(['operators', 'create', 'reg', '--roles', 'admin'], 'root');
    assert.equal(made.code, 0, JSON.stringify(made.json));
    const regToken = await run(
      ['operators', 'token', 'issue', '--for', 'reg', '--name', 'e2e', '--days', '1'],
      'root',
    );
    assert.equal(regToken.code, 0, JSON.stringify(regToken.json));
    tokens.reg = regToken.json.token;
    const applied = await run(['apply', '-f', file], 'reg');
    assert.equal(applied.code, 0, JSON.stringify(applied.json));
    const shown = await run(['tools', 'show', 'wire@1.0.0'], 'root');
    assert.equal(shown.code, 0, JSON.stringify(shown.json));
    const hash = String(shown.json.definition_hash);
    assert.match(hash, /^sha256:/);
    const review = [
      'tools',
      'review',
      'wire',
      '1.0.0',
      '--decision',
      'approved',
      '--hash',
      hash,
      '--notes',
      'amount bounded, one account',
    ];

    const queue = await run(['tools', 'reviews', '--pending'], 'alice');
    assert.equal(queue.code, 0, JSON.stringify(queue.json));
    assert.deepEqual(
      queue.json.reviews.map((r: { tool_id: string }) => r.tool_id),
      ['wire'],
    );

    const bootstrap = await run(review);
    assert.equal(bootstrap.code, 3);
    assert.equal(bootstrap.json.error.code, 'FORBIDDEN');
    assert.match(bootstrap.json.error.message, /bootstrap admin token cannot/);
    assert.match(bootstrap.json.error.message, /TOOLGATE_TOKEN/);
    const admin = await run(review, 'root');
    assert.equal(admin.code, 3);
    assert.equal(admin.json.error.code, 'FORBIDDEN');
    assert.match(admin.json.error.message, /needs the role approver; operator root holds admin/);

    // Approving makes a restricted tool callable: it needs alice's own second factor.
    const bare = await run(review, 'alice');
    assert.equal(bare.code, 2);
    assert.equal(bare.json.error.code, 'INPUT_INVALID');
    const reviewed = await run([...review, '--totp', await code('alice')], 'alice');
    assert.equal(reviewed.code, 0, JSON.stringify(reviewed.json));
    assert.equal(reviewed.json.review.reviewer, 'operator:alice');
    assert.match(reviewed.json.changeId, /^chg_/);
    await fourEyes(reviewed.json.changeId);
    const live = await run(['tools', 'show', 'wire@1.0.0'], 'root');
    assert.equal(live.json.lifecycle, 'active');

    const granted = await run(['grants', 'add', 'payer', 'payments:wire'], 'root');
    assert.equal(granted.code, 0, JSON.stringify(granted.json));
    const pending = await run(['changes', 'list', '--status', 'pending'], 'alice');
    assert.equal(pending.code, 0, JSON.stringify(pending.json));
    const grant = (pending.json.changes as { id: string; kind: string }[]).find(
      (c) => c.kind === 'grant',
    );
    assert.ok(grant, JSON.stringify(pending.json));
    const stranger = await run(['changes', 'approve', grant.id, '--totp', '123456']);
    assert.equal(stranger.json.error.code, 'FORBIDDEN');
    assert.match(stranger.json.error.message, /bootstrap admin token cannot/);
    await fourEyes(grant.id);
  });

  test('approvals approve --totp with alice’s token: the retry runs once, recorded as operator:alice', async () => {
    let wires = 0;
    const dataDir = join(dir, 'data');
    const tg: Gateway = await openGateway({
      db: `sqlite:${join(dir, 'tg.db')}`,
      approvalSigner: () => approvalSigner(dataDir),
      masterKey: () => loadMasterKey({ dataDir }),
      audit: { checkpoints: false },
      detectors: false,
      executor: demoExecutor().register('test.wire', () => {
        wires++;
        return { status: 'sent' };
      }),
    });
    try {
      const session = await tg.sessions.open('payer');
      const ctx = { agentId: 'payer', sessionId: session.id };
      const args = { to: 'ACC-7', cents: 900 };
      const waiting = await tg.gate.invoke(ctx, 'wire', args);
      assert.equal(waiting.kind, 'pending_approval', JSON.stringify(waiting));
      const id = waiting.kind === 'pending_approval' ? waiting.approvalId : '';

      const bootstrap = await run(['approvals', 'approve', id, '--totp', '123456']);
      assert.equal(bootstrap.code, 3);
      assert.equal(bootstrap.json.error.code, 'FORBIDDEN');
      assert.match(bootstrap.json.error.message, /bootstrap admin token cannot/);
      assert.match(bootstrap.json.error.message, /TOOLGATE_TOKEN/);
      const admin = await run(['approvals', 'approve', id, '--totp', '123456'], 'root');
      assert.equal(admin.json.error.code, 'FORBIDDEN');
      const stated = await run(['approvals', 'approve', id, '--approver', 'bob'], 'alice');
      assert.equal(stated.json.error.code, 'INPUT_INVALID');
      assert.equal((await tg.approvals.get(id)).status, 'pending');

      const listed = await run(['approvals', 'list', '--status', 'pending'], 'alice');
      assert.equal(listed.code, 0, JSON.stringify(listed.json));
      assert.deepEqual(
        listed.json.approvals.map((a: { id: string }) => a.id),
        [id],
      );
      const ok = await run(['approvals', 'approve', id, '--totp', await code('alice')], 'alice');
      assert.equal(ok.code, 0, JSON.stringify(ok.json));
      assert.equal(ok.json.decided_by, 'operator:alice');

      const ran = await tg.gate.invoke(ctx, 'wire', args);
      assert.equal(ran.kind, 'allow', JSON.stringify(ran));
      assert.equal(wires, 1);
      const again = await tg.gate.invoke(ctx, 'wire', args);
      assert.notEqual(again.kind, 'allow', 'an approval runs its call once');
      assert.equal(wires, 1);

      const events = await run(['events', 'list', '--subject', `approval:${id}`], 'root');
      assert.equal(events.code, 0, JSON.stringify(events.json));
      const actors = (events.json.events as { actor: string; via: string }[]).map(
        (e) => `${e.actor} ${e.via}`,
      );
      assert.ok(actors.includes('operator:alice cli'), JSON.stringify(events.json));
    } finally {
      await tg.close();
    }
  });

  test('approvers enroll of one’s own factor without --totp is refused (attack round 10, F1)', async () => {
    const own = await run(['approvers', 'enroll', 'root'], 'root');
    assert.equal(own.code, 3, JSON.stringify(own.json));
    assert.equal(own.json.error.code, 'FORBIDDEN');
    assert.match(own.json.error.message, /current code of it .*--totp/);
  });
});
