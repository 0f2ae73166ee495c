/**
 * Two-tier registration (C1): restricted, privileged and third-party definitions are drafts until
 * an approver records a security review of exactly their hash; public, read-only, internal tools
 * go live on the automatic checks, and an owner may self-register only those, for their own team.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MAX_PENDING_REVIEWS_PER_REGISTRANT } from '../../src/domain/catalog/security-review.js';
import {
  BOOTSTRAP_OPERATOR,
  type Operator,
  operatorActor,
} from '../../src/domain/operators/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { approveReview, REVIEWER } from '../support/reviews.js';
import { validSendTool, validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';
import { refusal as refusalOf } from './refusal.js';

const host: Actor = { id: 'cli:root', via: 'cli' };

function operator(id: string, roles: Operator['roles'], teams: string[] = []): Operator {
  return { id, name: id, roles, teams, authenticatedBy: 'password+totp' };
}
const carol = operator('carol', ['approver']);
const dave = operator('dave', ['approver', 'owner'], ['billing-team']);
const erin = operator('erin', ['auditor']);
const olga = operator('olga', ['owner'], ['billing-team']);
const ada = operator('ada', ['admin']);

interface Refusal {
  readonly code: string;
  readonly message: string;
  readonly details: Record<string, unknown> & { problems?: { pointer: string }[] };
}

const refusal = (promise: Promise<unknown>) => refusalOf<Refusal>(promise);

const restricted = (id: string, extra: Record<string, unknown> = {}) =>
  validTool({ id, name: id, access_tier: 'restricted', ...extra });

for (const backend of backends()) {
  describe(`security reviews on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let url: string;

    before(async () => {
      world = await openWorld({ backend });
      tg = world.tg;
      url = world.db;
    });
    after(async () => {
      await world.close();
    });

    async function snapshot(toolId: string, version = '1.0.0') {
      return {
        tool: await tg.catalog.get(toolId, version),
        reviews: await tg.reviews.of(toolId, version),
        events: (await tg.events.list({ limit: 10_000 })).length,
      };
    }

    test('a public, read-only, internal tool goes live at once; a restricted one is a draft in the queue', async () => {
      const pub = await tg.catalog.register(validTool({ id: 'pub_read', name: 'pub_read' }), host);
      assert.equal(pub.tool.lifecycle, 'active');
      assert.equal(pub.review, undefined);

      const r = await tg.catalog.register(restricted('res_read'), host);
      assert.equal(r.tool.lifecycle, 'draft');
      assert.deepEqual(r.review?.reasons, ['restricted']);
      assert.ok(!(await tg.catalog.offered()).some((t) => t.id === 'res_read'), 'offered');
      const queue = await tg.reviews.page('pending');
      const item = queue.items.find((i) => i.tool_id === 'res_read');
      assert.ok(item);
      assert.equal(item.version, '1.0.0');
      assert.equal(item.access_tier, 'restricted');
      assert.equal(item.definition_hash, r.tool.definition_hash);
      assert.equal(item.registered_by, 'cli:root');
      assert.equal(item.status, 'pending');
      assert.ok(item.registered_at);
    });

    test('activating an unreviewed draft is refused with REVIEW_REQUIRED, whoever asks', async () => {
      const err = await refusal(tg.catalog.activate('res_read', '1.0.0', host));
      assert.equal(err.code, 'REVIEW_REQUIRED');
      assert.equal(err.details.review, 'pending');
      assert.equal((await tg.catalog.get('res_read', '1.0.0')).lifecycle, 'draft');
    });

    test('third-party and open-source provenance need a review even on a public tool', async () => {
      const tp = await tg.catalog.register(
        validTool({ id: 'tp_read', name: 'tp_read', provenance: 'third_party' }),
        host,
      );
      assert.equal(tp.tool.lifecycle, 'draft');
      assert.deepEqual(tp.review?.reasons, ['third_party']);
      const oss = await tg.catalog.register(
        validTool({ id: 'oss_read', name: 'oss_read', provenance: 'oss' }),
        host,
      );
      assert.deepEqual(oss.review?.reasons, ['oss']);
    });

    test('who may not review: the bootstrap token, a non-approver, the registrant, the owning team — nothing changes', async () => {
      const { definition_hash } = await tg.catalog.get('res_read', '1.0.0');
      const input = { definition_hash, decision: 'approved' as const, notes: 'looks fine' };
      // An owner of billing-team registers as an admin would not: dave registers a tool of
      // another team through the library, so only the registrant rule applies to him.
      await tg.catalog.register(
        restricted('by_dave', { owner: 'support-team' }),
        operatorActor(dave, 'library'),
      );
      const daveHash = (await tg.catalog.get('by_dave', '1.0.0')).definition_hash;
      const before = await snapshot('res_read');
      const cases: [Operator, string, string, RegExp][] = [
        [BOOTSTRAP_OPERATOR, 'res_read', definition_hash, /bootstrap/],
        [erin, 'res_read', definition_hash, /approver role/],
        [ada, 'res_read', definition_hash, /approver role/],
        [dave, 'by_dave', daveHash, /registered this definition/],
        [dave, 'res_read', definition_hash, /billing-team/],
      ];
      for (const [op, id, hash, why] of cases) {
        const err = await refusal(
          tg.catalog.review(id, '1.0.0', op, { ...input, definition_hash: hash }),
        );
        assert.equal(err.code, 'FORBIDDEN', `${op.id} on ${id}`);
        assert.match(err.message, why);
      }
      // Nothing changes but one record of each refusal (INVARIANTS 14), the library's too.
      assert.deepEqual(await snapshot('res_read'), { ...before, events: before.events + 5 });
      const written = (await tg.events.list({ limit: 10_000 })).slice(before.events);
      assert.deepEqual(
        written.map((e) => [e.action, e.via, JSON.parse(e.details).reason]),
        ['bootstrap', 'not_approver', 'not_approver', 'own_registration', 'owning_team'].map(
          (reason) => ['tool.review_refused', 'library', reason],
        ),
      );
      assert.equal((await tg.reviews.of('by_dave', '1.0.0'))[0]?.status, 'pending');
    });

    test('a review of another definition hash is refused, and malformed input too', async () => {
      const before = await snapshot('res_read');
      const other = (await tg.catalog.get('tp_read', '1.0.0')).definition_hash;
      const err = await refusal(
        tg.catalog.review('res_read', '1.0.0', carol, {
          definition_hash: other,
          decision: 'approved',
          notes: 'x',
        }),
      );
      assert.equal(err.code, 'REVIEW_HASH_MISMATCH');
      assert.equal(err.details.statedHash, other);
      const bad = await refusal(
        tg.catalog.review('res_read', '1.0.0', carol, {
          definition_hash: before.tool.definition_hash,
          decision: 'maybe' as 'approved',
          notes: '',
        }),
      );
      assert.equal(bad.code, 'INPUT_INVALID');
      assert.deepEqual(
        (bad.details.problems ?? []).map((p) => p.pointer),
        ['/decision', '/notes'],
      );
      // Nothing changes but the refusal's own record (attack round 10 F6): one tool.review_refused
      // for the other hash; the malformed input is refused before any review is attempted.
      assert.deepEqual(await snapshot('res_read'), { ...before, events: before.events + 1 });
      const written = (await tg.events.list({ limit: 10_000 })).slice(before.events);
      assert.deepEqual(
        written.map((e) => [e.action, JSON.parse(e.details).reason]),
        [['tool.review_refused', 'hash_mismatch']],
      );
    });

    test('an approved review is recorded (who, when, hash, notes) as an event and an audit record, and the draft goes live', async () => {
      const { definition_hash } = await tg.catalog.get('res_read', '1.0.0');
      const result = await tg.catalog.review('res_read', '1.0.0', carol, {
        definition_hash,
        decision: 'approved',
        notes: 'schema bounded, no egress',
      });
      assert.equal(result.tool.lifecycle, 'active');
      assert.equal(result.review.status, 'approved');
      assert.equal(result.review.reviewer, 'operator:carol');
      assert.equal(result.review.definition_hash, definition_hash);
      assert.equal(result.review.notes, 'schema bounded, no egress');
      assert.ok(result.review.reviewed_at);
      assert.ok((await tg.catalog.offered()).some((t) => t.id === 'res_read'));

      const events = await tg.events.list({ subject: 'tool:res_read@1.0.0', limit: 10 });
      const reviewed = events.find((e) => e.action === 'tool.reviewed');
      assert.ok(reviewed, 'review event');
      assert.equal(reviewed.actor, 'operator:carol');
      const details = JSON.parse(String(reviewed.details)) as Record<string, unknown>;
      assert.equal(details.definition_hash, definition_hash);
      assert.equal(details.decision, 'approved');
      const store = await openStore(url);
      const audit = await store.db
        .selectFrom('audit_log')
        .selectAll()
        .where('kind', '=', 'event.tool.reviewed')
        .execute();
      await store.close();
      assert.ok(
        audit.some((a) => String(a.details).includes(definition_hash)),
        'the review is in the audit log',
      );
      await tg.gate.flush();
      const verify = await tg.audit.verify();
      assert.equal(verify.ok, true);

      const again = await refusal(
        tg.catalog.review('res_read', '1.0.0', REVIEWER, {
          definition_hash,
          decision: 'rejected',
          notes: 'changed my mind',
        }),
      );
      assert.equal(again.code, 'REVIEW_STATE');
      assert.equal(again.details.status, 'approved');
    });

    test('a new version is a new definition: the old review does not carry over', async () => {
      const next = await tg.catalog.register(restricted('res_read', { version: '1.1.0' }), host);
      assert.equal(next.tool.lifecycle, 'draft');
      assert.notEqual(
        next.tool.definition_hash,
        (await tg.catalog.get('res_read', '1.0.0')).definition_hash,
      );
      const err = await refusal(tg.catalog.activate('res_read', '1.1.0', host));
      assert.equal(err.code, 'REVIEW_REQUIRED');
      // The approved hash of 1.0.0 does not review 1.1.0.
      const stale = await refusal(
        tg.catalog.review('res_read', '1.1.0', carol, {
          definition_hash: (await tg.catalog.get('res_read', '1.0.0')).definition_hash,
          decision: 'approved',
          notes: 'same as before',
        }),
      );
      assert.equal(stale.code, 'REVIEW_HASH_MISMATCH');
      assert.equal((await approveReview(tg, 'res_read', '1.1.0')).tool.lifecycle, 'active');
    });

    test('a rejected review keeps the draft, with the reason visible; it cannot be activated', async () => {
      await tg.catalog.register(restricted('res_bad'), host);
      const { definition_hash } = await tg.catalog.get('res_bad', '1.0.0');
      const result = await tg.catalog.review('res_bad', '1.0.0', carol, {
        definition_hash,
        decision: 'rejected',
        notes: 'reads private data without a filter',
      });
      assert.equal(result.tool.lifecycle, 'draft');
      const err = await refusal(tg.catalog.activate('res_bad', '1.0.0', host));
      assert.equal(err.code, 'REVIEW_REQUIRED');
      assert.equal(err.details.review, 'rejected');
      assert.match(err.message, /reads private data/);
      const rejected = await tg.reviews.page('rejected');
      assert.equal(rejected.items[0]?.notes, 'reads private data without a filter');
      assert.ok(!(await tg.reviews.page('pending')).items.some((i) => i.tool_id === 'res_bad'));
    });

    test('a draft asked for as a draft stays one after approval; activating it then works', async () => {
      await tg.catalog.register(restricted('res_later'), host, { initialState: 'draft' });
      const result = await approveReview(tg, 'res_later', '1.0.0');
      assert.equal(result.tool.lifecycle, 'draft');
      assert.equal((await tg.catalog.activate('res_later', '1.0.0', host)).lifecycle, 'active');
    });

    test('a privileged irreversible tool: review first, then its four-eyes change opens', async () => {
      const r = await tg.catalog.register(
        validTool({
          id: 'wipe',
          name: 'wipe',
          action_class: 'irreversible',
          access_tier: 'privileged',
        }),
        host,
      );
      assert.equal(r.tool.lifecycle, 'draft');
      assert.equal(r.changeId, undefined, 'no change before the review');
      const reviewed = await approveReview(tg, 'wipe', '1.0.0');
      assert.ok(reviewed.changeId?.startsWith('chg_'));
      assert.equal(reviewed.tool.lifecycle, 'draft');
      const change = await tg.changes.get(reviewed.changeId ?? '');
      assert.equal(change.status, 'pending');
      assert.equal(change.required, 2);
      const err = await refusal(tg.catalog.activate('wipe', '1.0.0', host));
      assert.equal(err.code, 'FORBIDDEN');
    });

    test('the pending queue pages by cursor, newest first', async () => {
      for (let i = 0; i < 5; i++) await tg.catalog.register(restricted(`q_${i}`), host);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await tg.reviews.page('pending', { limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...page.items.map((i) => i.tool_id));
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      assert.equal(new Set(seen).size, seen.length, 'no item twice');
      for (let i = 0; i < 5; i++) assert.ok(seen.includes(`q_${i}`));
    });

    describe('owner self-registration', () => {
      test('an owner registers a public, read-only tool of their team: live without review', async () => {
        const r = await tg.catalog.register(
          validTool({ id: 'own_read', name: 'own_read' }),
          operatorActor(olga, 'rest'),
          { operator: olga },
        );
        assert.equal(r.tool.lifecycle, 'active');
        assert.equal(r.review, undefined);
      });

      test('an owner registering anything else, or for another team, is refused 403 and nothing is stored', async () => {
        const before = (await tg.catalog.list()).length;
        const cases: [Record<string, unknown>, RegExp][] = [
          [
            validTool({ id: 'own_res', name: 'own_res', access_tier: 'restricted' }),
            /public, read-only/,
          ],
          [
            validTool({ id: 'own_tp', name: 'own_tp', provenance: 'third_party' }),
            /public, read-only/,
          ],
          [
            validTool({ id: 'own_w', name: 'own_w', action_class: 'reversible_write' }),
            /public, read-only/,
          ],
          [validTool({ id: 'own_x', name: 'own_x', owner: 'support-team' }), /support-team/],
          [validSendTool({ id: 'own_send', name: 'own_send' }), /public, read-only/],
        ];
        for (const [def, why] of cases) {
          const err = await refusal(
            tg.catalog.register(def, operatorActor(olga, 'rest'), { operator: olga }),
          );
          assert.equal(err.code, 'FORBIDDEN', String(def.id));
          assert.match(err.message, why);
        }
        const approver = await refusal(
          tg.catalog.register(
            validTool({ id: 'apr_read', name: 'apr_read' }),
            operatorActor(carol, 'rest'),
            {
              operator: carol,
            },
          ),
        );
        assert.equal(approver.code, 'FORBIDDEN');
        assert.equal((await tg.catalog.list()).length, before);
      });

      test('apply holds an owner to the same rule: a restricted tool refuses the whole file; their own public read tool applies live', async () => {
        const before = (await tg.catalog.list()).length;
        const err = await refusal(
          tg.config.apply(
            [
              { kind: 'Tool', spec: validTool({ id: 'ap_ok', name: 'ap_ok' }) },
              { kind: 'Tool', spec: restricted('ap_res') },
            ],
            operatorActor(olga, 'rest'),
            { operator: olga },
          ),
        );
        assert.equal(err.code, 'FORBIDDEN');
        assert.equal((await tg.catalog.list()).length, before, 'nothing of the file was stored');
        const ok = await tg.config.apply(
          [{ kind: 'Tool', spec: validTool({ id: 'ap_ok', name: 'ap_ok' }) }],
          operatorActor(olga, 'rest'),
          { operator: olga },
        );
        assert.equal(ok.changes[0]?.action, 'create');
        assert.equal((await tg.catalog.get('ap_ok', '1.0.0')).lifecycle, 'active');
      });

      test('an admin operator registers a restricted tool as a draft awaiting review', async () => {
        const r = await tg.catalog.register(restricted('adm_res'), operatorActor(ada, 'rest'), {
          operator: ada,
        });
        assert.equal(r.tool.lifecycle, 'draft');
        assert.equal((await tg.reviews.of('adm_res', '1.0.0'))[0]?.registered_by, 'operator:ada');
      });
    });

    test('one registrant may have 50 reviews waiting: the next is refused and stores nothing, others still register', async () => {
      const flooder: Actor = { id: 'operator:flood', via: 'rest' };
      const mine = async () =>
        (await tg.reviews.page('pending', { limit: 500 })).items.filter(
          (r) => r.registered_by === flooder.id,
        );
      for (let i = 0; (await mine()).length < MAX_PENDING_REVIEWS_PER_REGISTRANT; i++)
        await tg.catalog.register(restricted(`flood_${i}`), flooder);
      const before = { events: (await tg.events.list({ limit: 10_000 })).length };
      const err = await refusal(tg.catalog.register(restricted('flood_over'), flooder));
      assert.equal(err.code, 'RATE_LIMITED');
      assert.equal(err.details.rule, 'review.pending_cap');
      await assert.rejects(() => tg.catalog.get('flood_over', '1.0.0'), /no tool flood_over@1.0.0/);
      assert.equal((await tg.events.list({ limit: 10_000 })).length, before.events);
      // The benign neighbours: a tool that needs no review, and another registrant's draft.
      const pub = await tg.catalog.register(
        validTool({ id: 'flood_pub', name: 'flood_pub' }),
        flooder,
      );
      assert.equal(pub.tool.lifecycle, 'active');
      const other = await tg.catalog.register(restricted('not_flood'), host);
      assert.equal(other.tool.lifecycle, 'draft');
      // A draft retired before its review leaves the queue, and frees its place in the cap.
      const retired = (await mine())[0];
      assert.ok(retired);
      await tg.catalog.retire(retired.tool_id, retired.version, host, { reason: 'test' });
      assert.equal((await mine()).length, MAX_PENDING_REVIEWS_PER_REGISTRANT - 1);
      const freed = await tg.catalog.register(restricted('flood_freed'), flooder);
      assert.equal(freed.tool.lifecycle, 'draft');
      // Once a reviewer decides one, the registrant may register one more.
      const first = (await mine())[0];
      assert.ok(first);
      await approveReview(tg, first.tool_id, first.version);
      const again = await tg.catalog.register(restricted('flood_over'), flooder);
      assert.equal(again.tool.lifecycle, 'draft');
    });
  });
}
