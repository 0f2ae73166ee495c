/**
 * @module Four eyes over the program behind a provider (attack round 27, G7): the admin who
 * changed a provider's launch (`provider.updated` with `launch_changed: true`) may not review the
 * re-classified version of its tool that runs the new program, whoever classified it — refused
 * over REST (403, rule `review.launch_changer`, audited as `tool.review_refused`), the CLI (exit
 * 3) and the library, before any second factor is asked for; another approver reviews it. The
 * changer counts by the registrant's rule (`apartFrom`): an approver the changer set up that
 * nobody else confirmed (here: the bootstrap token's) is refused alike. The benign neighbours:
 * the author of an update that left the launch alone reviews, and once an approver apart from
 * the changer has approved a version running the new program, the changer may review a later
 * version of it (the rule covers launches no approved review has seen).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import type { Operator } from '../../src/domain/operators/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { eventsSince, lastSeq } from '../support/events.js';
import { approveReview } from '../support/reviews.js';
import { openWorld, personalToken, type World } from '../support/world.js';
import { fixtureProvider, NOTES_BOT, publicRead } from './provider-support.js';

const setup: Actor = { id: 'test-admin', via: 'library' };

function person(id: string, roles: Operator['roles']): Operator {
  return { id, name: id, roles, teams: [], authenticatedBy: 'password+totp' };
}

const ann = person('ann', ['admin', 'approver']);
const ben = person('ben', ['admin', 'approver']);
const cid = person('cid', ['approver']);
const asAdmin = (op: Operator): Actor => ({ id: `operator:${op.id}`, via: 'library' });

for (const backend of backends()) {
  describe(`the admin who changed a provider's launch does not review the version that runs it (${backend.name})`, () => {
    let w: World;
    let tg: Gateway;
    let stateDir: string;
    let cliDir: string;
    let now = new Date('2026-03-01T12:00:00Z');
    const tokens: Record<string, string> = {};
    const secrets: Record<string, string> = {};

    const spec = (script: string, extra: Record<string, unknown> = {}) => ({
      ...fixtureProvider('notes', script, [join(stateDir, 'mode')], stateDir),
      ...extra,
    });
    /** Ben classifies fetch_notes again (a new major version, a draft waiting for its review). */
    const classify = async (wallMs: number) =>
      (
        await tg.providers.classify(
          'notes',
          'fetch_notes',
          publicRead(['notes:read'], { wall_time_ms: wallMs }),
          asAdmin(ben),
        )
      ).tool;
    const lastUpdate = async () => {
      const events = await tg.admin.events.list({ subject: 'provider:notes', limit: 50 });
      const update = events.filter((e) => e.action === 'provider.updated').at(-1);
      assert.ok(update);
      return JSON.parse(update.details ?? '{}') as Record<string, unknown>;
    };
    const review = (op: Operator, id: string, version: string) =>
      approveReview(tg, id, version, op);
    const statusOf = async (id: string, version: string) =>
      (await tg.admin.reviews.of(id, version))[0]?.status;

    before(async () => {
      w = await openWorld({
        backend,
        agents: [NOTES_BOT],
        rest: true,
        options: { masterKey: MasterKey.generate(), clock: () => now },
      });
      tg = w.tg;
      // The genesis admin first, whose secret the bootstrap token is: the accounts the token sets
      // up after it count as root's (confirmation.ts), not as the launch changer's.
      await tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id: 'root', roles: ['admin'] });
      for (const op of [ann, ben, cid]) {
        await tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id: op.id, roles: [...op.roles] });
        tokens[op.id] = await personalToken(tg.admin, op.id);
      }
      // The approver's code first: once an admin is set up, the token enrols no one else.
      for (const id of ['cid', 'ann'])
        secrets[id] = (await tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, id)).secret;
      stateDir = mkdtempSync(join(tmpdir(), 'toolgate-launch-changer-'));
      chmodSync(stateDir, 0o755);
      writeFileSync(join(stateDir, 'mode'), 'benign');
      cliDir = mkdtempSync(join(tmpdir(), 'toolgate-launch-changer-cli-'));
      await tg.providers.register(spec('rug-pull-server.mjs'), setup);
    });

    after(async () => {
      await w?.close();
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      rmSync(cliDir, { recursive: true, force: true });
    });

    test('the benign neighbour: the author of an update that left the launch alone reviews the version', async () => {
      await tg.providers.register(
        spec('rug-pull-server.mjs', { idle_timeout_ms: 60_000 }),
        asAdmin(ann),
      );
      assert.equal((await lastUpdate()).launch_changed, false);
      const v = await classify(11_000);
      const done = await review(ann, v.id, v.version);
      assert.equal(done.review.status, 'approved');
      assert.equal(done.review.reviewer, 'operator:ann');
    });

    test('the launch changer is refused over REST, the CLI and the library, audited, the review still pending; another approver reviews it', async () => {
      await tg.providers.register(
        spec('swapped-notes-server.mjs', { idle_timeout_ms: 60_000 }),
        asAdmin(ann),
      );
      assert.equal((await lastUpdate()).launch_changed, true);
      const v = await classify(12_000);
      const { definition_hash } = await tg.catalog.get(v.id, v.version);
      const path = `/v1/tools/${v.id}/versions/${v.version}/review`;
      const body = { definition_hash, decision: 'approved', notes: 'checked the program' };

      const seq = await lastSeq(tg.admin);
      // With her own valid code: only the rule stands in the way.
      const annCode = totpAt(secrets.ann ?? '', now);
      const rest = await w.send('POST', path, { ...body, totp: annCode }, tokens.ann);
      assert.equal(rest.status, 403, JSON.stringify(rest.body));
      assert.equal(rest.body.code, 'FORBIDDEN');
      assert.equal((rest.body.details as { rule?: string }).rule, 'review.launch_changer');
      assert.match(String(rest.body.message), /review\.launch_changer/);
      assert.match(String(rest.body.message), /changed the launch of provider notes/);
      // What the attempt wrote: the gateway's own background records (health, owner notices)
      // may land meanwhile and are not the review's.
      const written = (await eventsSince(tg.admin, seq)).filter(
        (e) => !e.actor.startsWith('system:'),
      );
      assert.deepEqual(
        written.map((e) => [e.action, e.actor, e.details.reason]),
        [['tool.review_refused', 'operator:ann', 'launch_changer']],
      );

      ensureBuilt();
      const cli = await runCli(
        cliDir,
        [
          '--db',
          w.db,
          '--json',
          'tools',
          'review',
          v.id,
          v.version,
          '--decision',
          'approved',
        ].concat(['--hash', definition_hash, '--notes', 'checked the program', '--totp', annCode]),
        { TOOLGATE_TOKEN: tokens.ann ?? '' },
      );
      assert.equal(cli.code, 3, cli.stdout + cli.stderr);
      assert.match(cli.stdout, /review\.launch_changer/);

      for (const decision of ['approved', 'rejected'] as const) {
        await assert.rejects(
          tg.admin.catalog.review(v.id, v.version, ann, {
            definition_hash,
            decision,
            notes: 'my own program',
          }),
          (err: Error & { code?: string; details?: { rule?: string } }) =>
            err.code === 'FORBIDDEN' && err.details?.rule === 'review.launch_changer',
        );
      }
      assert.equal(await statusOf(v.id, v.version), 'pending', 'nothing decided');

      // Another approver, apart from the changer, reviews it (over REST with her code).
      now = new Date(now.getTime() + 90_000);
      const ok = await w.send(
        'POST',
        path,
        { ...body, totp: totpAt(secrets.cid ?? '', now) },
        tokens.cid,
      );
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(await statusOf(v.id, v.version), 'approved');
    });

    test('once an approver apart from the changer approved the new program, the changer reviews a later version of it', async () => {
      const v = await classify(13_000);
      const done = await review(ann, v.id, v.version);
      assert.equal(done.review.status, 'approved');
    });

    test('a launch the bootstrap token set: an approver the token set up, which nobody else confirmed, is not apart from it', async () => {
      await tg.providers.register(
        spec('swapped-notes-server.mjs', { idle_timeout_ms: 60_000, env: { NOTES_LANG: 'en' } }),
        { id: 'admin-token', via: 'rest' },
      );
      assert.equal((await lastUpdate()).launch_changed, true);
      const v = await classify(14_000);
      await assert.rejects(
        review(cid, v.id, v.version),
        (err: Error & { details?: { rule?: string } }) =>
          err.details?.rule === 'review.launch_changer' &&
          /admin-token changed the launch of provider notes/.test(err.message) &&
          /operator cid was set up by admin-token/.test(err.message),
      );
      assert.equal(await statusOf(v.id, v.version), 'pending');
    });
  });
}
