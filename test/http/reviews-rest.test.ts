/**
 * Security reviews over REST (C1): registration of a restricted tool answers a draft awaiting
 * review, the queue pages by cursor, the review route has its schema, and the bootstrap admin
 * token — nobody in particular — is refused as a reviewer with nothing changed but the record of
 * the refusal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Gateway } from '../../src/host/toolgate.js';
import { approveReview } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-review-tests-0123456789abcdef';

interface Reply {
  readonly status: number;
  readonly body: {
    code?: string;
    message?: string;
    details?: Record<string, unknown>;
    [k: string]: unknown;
  };
}

describe('security reviews over REST', () => {
  let world: World;
  let tg: Gateway;
  let base = '';

  const call = restClient<Reply['body']>(() => base, ADMIN_TOKEN);

  before(async () => {
    world = await openWorld({ rest: { adminToken: ADMIN_TOKEN } });
    ({ tg, base } = world);
  });
  after(async () => {
    await world.close();
  });

  test('POST /v1/tools of a restricted tool answers a draft with the review it waits for', async () => {
    const res = await call(
      'POST',
      '/v1/tools',
      validTool({ id: 'rest_res', name: 'rest_res', access_tier: 'restricted' }),
    );
    assert.equal(res.status, 201);
    const tool = res.body.tool as { lifecycle: string };
    assert.equal(tool.lifecycle, 'draft');
    const review = res.body.review as { id: string; reasons: string[] };
    assert.match(review.id, /^rev_/);
    assert.deepEqual(review.reasons, ['restricted']);
    const activate = await call('POST', '/v1/tools/rest_res/versions/1.0.0/activate');
    assert.equal(activate.status, 409);
    assert.equal(activate.body.code, 'REVIEW_REQUIRED');
  });

  test('the bootstrap admin token cannot review (403), and nothing changes', async () => {
    const { definition_hash } = await tg.catalog.get('rest_res', '1.0.0');
    const events = (await tg.events.list({ limit: 10_000 })).length;
    const res = await call('POST', '/v1/tools/rest_res/versions/1.0.0/review', {
      definition_hash,
      decision: 'approved',
      notes: 'looks fine',
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'FORBIDDEN');
    assert.match(res.body.message ?? '', /bootstrap/);
    assert.deepEqual(Object.keys(res.body).sort(), ['code', 'details', 'message']);
    assert.equal((await tg.catalog.get('rest_res', '1.0.0')).lifecycle, 'draft');
    // Nothing else: the refusal's own record is all it writes (INVARIANTS 14).
    const written = (await tg.events.list({ limit: 10_000 })).slice(events);
    assert.deepEqual(
      written.map((e) => [e.action, e.actor, e.subject]),
      [['tool.review_refused', 'admin-token', 'tool:rest_res@1.0.0']],
    );
  });

  test('the review route checks its body before anything else', async () => {
    const missing = await call('POST', '/v1/tools/rest_res/versions/1.0.0/review', {
      decision: 'approved',
    });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'INPUT_INVALID');
    const stated = await call('POST', '/v1/tools/rest_res/versions/1.0.0/review', {
      definition_hash: `sha256:${'0'.repeat(64)}`,
      decision: 'approved',
      notes: 'x',
      reviewer: 'alice',
    });
    assert.equal(stated.status, 400, 'a stated reviewer is not a field');
  });

  test('GET /v1/reviews?status=pending is the queue, cursor-paged; decided reviews show who and what', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await call(
        'POST',
        '/v1/tools',
        validTool({ id: `rest_q${i}`, name: `rest_q${i}`, provenance: 'third_party' }),
      );
      assert.equal(r.status, 201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/v1/reviews?status=pending&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await call('GET', q);
      assert.equal(page.status, 200);
      const items = page.body.reviews as { tool_id: string; definition_hash: string }[];
      assert.ok(items.length <= 2);
      for (const item of items) assert.match(item.definition_hash, /^sha256:/);
      seen.push(...items.map((i) => i.tool_id));
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    assert.deepEqual(seen.sort(), ['rest_q0', 'rest_q1', 'rest_q2', 'rest_res']);

    await approveReview(tg, 'rest_q0', '1.0.0');
    const approved = await call('GET', '/v1/reviews?status=approved');
    const item = (approved.body.reviews as Record<string, unknown>[])[0];
    assert.equal(item?.tool_id, 'rest_q0');
    assert.equal(item?.reviewer, 'operator:reviewer');
    assert.equal(item?.registered_by, 'admin-token');
    assert.ok(item?.reviewed_at);
    assert.equal((await tg.catalog.get('rest_q0', '1.0.0')).lifecycle, 'active');

    const bad = await call('GET', '/v1/reviews?status=maybe');
    assert.equal(bad.status, 400);
  });

  test('the review routes are in the OpenAPI document', async () => {
    const res = await fetch(`${base}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    assert.ok(doc.paths['/v1/reviews']?.get);
    assert.ok(doc.paths['/v1/tools/{id}/versions/{version}/review']?.post);
  });
});
