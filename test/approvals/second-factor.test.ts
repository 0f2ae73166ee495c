/**
 * Second factors cannot be guessed: each approver's TOTP attempts are counted
 * in the database every replica shares; after a failure the next attempt waits (1 s, doubling),
 * ten failures lock the approver for 15 minutes, a code already used in its window is refused,
 * failures are audited and alerted, and `toolgate approvers unlock` is the way out. Approvals are
 * made as operator accounts through the admin API of two gateways on one database (what
 * `/v1/changes/:id/approve` does for an authenticated operator), the unlock through the CLI, on
 * SQLite and (when the harness runs one) PostgreSQL, with a controlled clock so nothing depends
 * on timing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { asReply, confirmDeciders, enrol, operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';

const admin: Actor = { id: 'admin', via: 'library' };
// Ahead of the real clock: the CLI (which runs on the real clock) then sees the test's lockout as
// still in force, as an admin would while it is.
const START = Math.floor(Date.now() / 30_000) * 30_000 + 86_400_000;

interface Reply {
  status: number;
  body: {
    code?: string;
    message?: string;
    status?: string;
    approvers?: unknown[];
    details?: { reason?: string; retryAfterSeconds?: number; failures?: number };
  };
}

for (const backend of backends()) {
  describe(`approvers' second factor is rate-limited in the store (${backend.name})`, () => {
    let nowMs = START;
    const clock = () => new Date(nowMs);
    const secrets = new Map<string, string>();
    let url: string;
    let tg: Gateway;
    let replica: Gateway;
    let inspector: Store;
    let drop: () => Promise<void>;
    let dataDir: string;
    let tools = 0;

    /** An admin's own personal token, for the CLI (set in `before`). */
    let cliToken = '';
    before(async () => {
      const fresh = await backend.fresh();
      url = fresh.url;
      drop = fresh.drop;
      dataDir = mkdtempSync(join(tmpdir(), 'toolgate-2fa-'));
      const options = { db: url, clock, masterKey: MasterKey.generate() };
      tg = await openGateway(options);
      // A second gateway on the same database: a replica with its own memory.
      replica = await openGateway(options);
      inspector = await openStore(url);
      for (const id of ['alice', 'bob', 'carol', 'dave'])
        secrets.set(id, (await enrol(tg.admin, id)).secret);
      // Confirmed, so they count in a two-person change; three codes of the confirmer a step.
      await confirmDeciders(tg.admin, ['alice', 'bob', 'carol'], clock());
      nowMs += 90_000;
      await confirmDeciders(tg.admin, ['dave'], clock());
      // The CLI unlocks as an admin's own account: after the set-up the bootstrap token unlocks
      // no decider (attack round 12, N3).
      const genesis = {
        ...operator('world-genesis', ['admin']),
        authenticatedBy: 'password+totp' as const,
      };
      cliToken = (
        await tg.admin.operators.issueToken(genesis, {
          operatorId: genesis.id,
          name: 'cli',
          expiresInDays: 366,
        })
      ).token;
    });
    after(async () => {
      await replica.close();
      await tg.close();
      await inspector.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    /** Registers an irreversible tool: a change that waits for two approvers. */
    const pendingChange = async (): Promise<string> => {
      tools += 1;
      await tg.config.apply(
        [
          {
            kind: 'Tool',
            spec: validTool({
              id: `refund_${tools}`,
              name: `refund_${tools}`,
              action_class: 'irreversible',
              access_tier: 'privileged',
              required_capabilities: ['pay:refund'],
            }),
          },
        ],
        admin,
      );
      await approvePendingReviews(tg);
      const change = (await tg.changes.list('pending')).find((c) =>
        c.subject.includes(`refund_${tools}`),
      );
      assert.ok(change);
      return change.id;
    };
    /** The approver's own approval, on the first gateway or the replica. */
    const approve = async (
      change: string,
      approver: string,
      totp: string,
      at: 'first' | 'replica' = 'first',
    ): Promise<Reply> =>
      (await asReply(() =>
        (at === 'first' ? tg : replica).admin.changes.approve(change, operator(approver), totp),
      )) as Reply;
    const code = (approver: string) => totpAt(secrets.get(approver) ?? '', clock());
    /** A six-digit code that is none of the three live ones. */
    const wrong = (approver: string) => {
      const live = new Set(
        [-1, 0, 1].map((d) => totpAt(secrets.get(approver) ?? '', new Date(nowMs + d * 30_000))),
      );
      let n = 0;
      while (live.has(String(n).padStart(6, '0'))) n++;
      return String(n).padStart(6, '0');
    };
    const events = async (action: string, approver: string) =>
      (
        await inspector.db
          .selectFrom('events')
          .selectAll()
          .where('action', '=', action)
          .where('subject', '=', `approver:${approver}`)
          // In the order written: without it PostgreSQL may return them in any order.
          .orderBy('seq')
          .execute()
      ).map((e) => JSON.parse(e.details) as Record<string, unknown>);

    test('a burst of wrong codes on two replicas gets one code checked; the right code waits for the backoff', async () => {
      nowMs += 3_600_000;
      const change = await pendingChange();
      const guesses = 300;
      const statuses: number[] = [];
      // Bounded: 300 guesses, 20 at a time, the batches alternating between the two gateways.
      // (Within one process two SQLite connections must not interleave their transactions:
      // better-sqlite3 blocks the event loop while it waits for the other's lock.)
      for (let i = 0; i < guesses; i += 20) {
        const batch = await Promise.all(
          Array.from({ length: 20 }, () =>
            approve(change, 'alice', wrong('alice'), (i / 20) % 2 === 0 ? 'first' : 'replica'),
          ),
        );
        statuses.push(...batch.map((r) => r.status));
      }
      const checked = statuses.filter((s) => s === 400).length;
      const refused = statuses.filter((s) => s === 429).length;
      assert.equal(checked, 1, `codes checked: ${checked} of ${guesses}`);
      assert.equal(refused, guesses - 1);

      // The right code, at once: not checked either (that is what makes guessing useless).
      const early = await approve(change, 'alice', code('alice'));
      assert.equal(early.status, 429);
      assert.equal(early.body.code, 'SECOND_FACTOR_LOCKED');
      assert.equal(early.body.details?.reason, 'backoff');
      assert.equal(early.body.details?.retryAfterSeconds, 1);
      assert.equal((await tg.changes.get(change)).approvers.length, 0, 'nothing was approved');

      // The person who waits a second gets in.
      nowMs += 1000;
      const ok = await approve(change, 'alice', code('alice'));
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.approvers?.length, 1);
      assert.equal((await events('approver.totp_failed', 'alice')).length, 1);
      assert.equal((await events('approver.totp_refused', 'alice')).length, guesses);
    });

    test('backoff doubles with each failure, ten lock the approver; alerts from the third; unlock is the way out (CLI)', async () => {
      nowMs += 3_600_000;
      const change = await pendingChange();
      for (let failure = 1; failure <= 10; failure++) {
        const r = await approve(change, 'bob', wrong('bob'));
        assert.equal(r.status, 400, `failure ${failure}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'INPUT_INVALID');
        if (failure === 10) break;
        const delayMs = Math.min(1000 * 2 ** (failure - 1), 300_000);
        // Just before the wait ends: refused, with how long is left.
        nowMs += delayMs - 1;
        const early = await approve(change, 'bob', code('bob'));
        assert.equal(early.status, 429, `failure ${failure}`);
        assert.equal(early.body.details?.reason, 'backoff');
        assert.equal(early.body.details?.failures, failure);
        nowMs += 1;
      }
      const locked = await approve(change, 'bob', code('bob'));
      assert.equal(locked.status, 429);
      assert.equal(locked.body.details?.reason, 'locked');
      assert.equal(locked.body.details?.retryAfterSeconds, 15 * 60);
      // Longer than any backoff, shorter than the lock: still locked, even with the right code.
      nowMs += 10 * 60_000;
      assert.equal((await approve(change, 'bob', code('bob'))).body.details?.reason, 'locked');

      assert.equal((await events('approver.totp_failed', 'bob')).length, 9);
      assert.equal((await events('approver.totp_locked', 'bob')).length, 1);
      const alerts = await events('alert.raised', 'bob');
      assert.equal(alerts.length, 8, 'failures 3 to 10 each raise an alert');
      assert.equal(alerts.at(-1)?.detector, 'second_factor');
      assert.equal(alerts.at(-1)?.locked, true);

      // The admin's way out, through the CLI on the same database.
      ensureBuilt();
      const status = await cli(['--json', 'approvers', 'status', 'bob']);
      assert.equal(status.code, 0, status.stderr);
      assert.equal((JSON.parse(status.stdout) as { failures: number }).failures, 10);
      const unlock = await cli(['--json', 'approvers', 'unlock', 'bob']);
      assert.equal(unlock.code, 0, unlock.stderr);
      assert.equal((JSON.parse(unlock.stdout) as { locked_until: null }).locked_until, null);
      const unlocked = await events('approver.totp_unlocked', 'bob');
      assert.equal(unlocked.length, 1);
      assert.equal(unlocked[0]?.was_locked, true);

      nowMs += 30_000;
      const ok = await approve(change, 'bob', code('bob'));
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });

    test('a lockout of one approver leaves the others alone', async () => {
      const change = await pendingChange();
      nowMs += 30_000;
      const ok = await approve(change, 'alice', code('alice'));
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });

    test('an admin cannot clear her own failed codes (attack round 11, F8); another admin can', async () => {
      const change = await pendingChange();
      nowMs += 3_600_000;
      const failed = await approve(change, 'alice', wrong('alice'));
      assert.equal(failed.status, 400, JSON.stringify(failed.body));
      const self: Actor = { id: 'operator:alice', via: 'cli' };
      const refused = await asReply(() => tg.admin.secondFactor.unlock('alice', self));
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal((refused.body as { code?: string }).code, 'FORBIDDEN');
      assert.equal((await tg.admin.secondFactor.state('alice')).failures, 1, 'nothing cleared');
      assert.equal((await events('approver.totp_unlocked', 'alice')).length, 0);
      const audited = await inspector.db
        .selectFrom('events')
        .selectAll()
        .where('action', '=', 'operator.four_eyes_refused')
        .where('subject', '=', 'operator:alice')
        .execute();
      assert.deepEqual(
        audited.map((e) => [e.actor, JSON.parse(e.details).reason, JSON.parse(e.details).edge]),
        [['operator:alice', 'own_unlock', 'cli']],
      );
      // Benign: another admin unlocks her.
      const s = await tg.admin.secondFactor.unlock('alice', { id: 'operator:bob', via: 'cli' });
      assert.equal(s.failures, 0);
      assert.equal((await events('approver.totp_unlocked', 'alice')).length, 1);
    });

    test('a correct code already used within its window is refused, and counted as a failure', async () => {
      nowMs += 3_600_000;
      const first = await pendingChange();
      const second = await pendingChange();
      const used = code('carol');
      assert.equal((await approve(first, 'carol', used)).status, 200);
      const reused = await approve(second, 'carol', used);
      assert.equal(reused.status, 400);
      assert.match(String(reused.body.message), /replayed/);
      const [failed] = await events('approver.totp_failed', 'carol');
      assert.equal(failed?.reason, 'replayed');
      // On the other replica too, after the wait.
      nowMs += 2000;
      assert.equal((await approve(second, 'carol', used, 'replica')).status, 400);
      // The next step's code is fresh.
      nowMs += 30_000;
      assert.equal((await approve(second, 'carol', code('carol'))).status, 200);
    });

    test('a malformed code is refused without spending an attempt', async () => {
      nowMs += 3_600_000;
      const change = await pendingChange();
      for (const bad of ['12345a', '', '1234567']) {
        const r = await approve(change, 'dave', bad);
        assert.equal(r.status, 400);
        assert.equal(r.body.code, 'INPUT_INVALID');
      }
      assert.equal((await events('approver.totp_failed', 'dave')).length, 0);
      assert.equal((await approve(change, 'dave', code('dave'))).status, 200);
    });

    const cli = (args: readonly string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [MAIN, '--db', url, '--data-dir', dataDir, ...args],
          { cwd: dataDir, env: { ...cleanEnv(), TOOLGATE_TOKEN: cliToken } },
          (err, stdout, stderr) =>
            resolve({
              code: err ? Number((err as { code?: number }).code ?? 1) : 0,
              stdout,
              stderr,
            }),
        );
      });
  });
}
