/**
 * A security review that makes a restricted, privileged or third-party tool callable needs the
 * reviewer's own second factor over REST (as the CLI's `tools review --totp` and the console's
 * review form do): without a code, or with a wrong one, the draft stays a draft and the review
 * pending; with the reviewer's code it goes live. A rejection needs none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { personalToken } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-review-step-up-0123456789abcdef';
const sqlite = backends().find((b) => b.name === 'sqlite');

describe('security reviews need the reviewer’s second factor over REST', () => {
  let tg: Gateway;
  let app: FastifyInstance;
  let base = '';
  let drop: () => Promise<void>;
  let token = '';
  // An admin who registers the tools: what the bootstrap token registers, an account it set up
  // (alice) does not review (attack round 11, F3).
  let registrant = '';
  let secret = '';
  let now = new Date('2026-03-01T12:00:00Z');

  const call = async (method: string, path: string, body: unknown, bearer: string) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  async function register(
    id: string,
    tier: 'restricted' | 'privileged' | 'public',
    provenance = 'internal',
  ) {
    const res = await call(
      'POST',
      '/v1/tools',
      validTool({
        id,
        name: id,
        access_tier: tier,
        provenance,
        required_capabilities: [`${id}:use`],
      }),
      registrant,
    );
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const tool = res.body.tool as { lifecycle: string; definition_hash: string };
    assert.equal(tool.lifecycle, 'draft');
    return tool.definition_hash;
  }

  before(async () => {
    assert.ok(sqlite);
    const fresh = await sqlite.fresh();
    drop = fresh.drop;
    tg = await openGateway({ db: fresh.url, clock: () => now, masterKey: MasterKey.generate() });
    app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    // The genesis admin first, so reg (who registers) is another admin, not the token's holder:
    // alice, set up by the token, is not reg's account (attack round 12, N1).
    await tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id: 'gen', roles: ['admin'] });
    await tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id: 'alice', roles: ['approver'] });
    secret = (await tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, 'alice')).secret;
    token = await personalToken(tg.admin, 'alice', { name: 'reviews' });
    await tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id: 'reg', roles: ['admin'] });
    registrant = await personalToken(tg.admin, 'reg', { name: 'tools' });
  });
  after(async () => {
    await app?.close();
    await tg?.close();
    await drop?.();
  });

  for (const [id, tier, provenance] of [
    ['res_tool', 'restricted', 'internal'],
    ['priv_tool', 'privileged', 'internal'],
    ['vendor_tool', 'public', 'third_party'],
  ] as const) {
    test(`approving ${id} (${tier}, ${provenance}) needs the reviewer's code; a missing or wrong one changes nothing`, async () => {
      const hash = await register(id, tier, provenance);
      const path = `/v1/tools/${id}/versions/1.0.0/review`;
      const body = { definition_hash: hash, decision: 'approved', notes: 'checked' };
      const bare = await call('POST', path, body, token);
      assert.equal(bare.status, 400, JSON.stringify(bare.body));
      assert.equal(bare.body.code, 'INPUT_INVALID');
      now = new Date(now.getTime() + 90_000);
      const wrong = totpAt(secret, new Date(now.getTime() - 600_000));
      const bad = await call('POST', path, { ...body, totp: wrong }, token);
      assert.equal(bad.status, 400, JSON.stringify(bad.body));
      assert.equal((await tg.admin.reviews.of(id, '1.0.0'))[0]?.status, 'pending');
      assert.equal((await tg.catalog.get(id, '1.0.0')).lifecycle, 'draft');

      now = new Date(now.getTime() + 90_000);
      const ok = await call('POST', path, { ...body, totp: totpAt(secret, now) }, token);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal((ok.body.review as { reviewer: string }).reviewer, 'operator:alice');
      assert.equal((await tg.admin.reviews.of(id, '1.0.0'))[0]?.status, 'approved');
      // Live, or (privileged) waiting for its four-eyes change: the review no longer holds it.
      assert.ok((ok.body.tool as { lifecycle: string }).lifecycle === 'active' || ok.body.changeId);
    });
  }

  test('a rejection needs no second factor', async () => {
    const hash = await register('res_rejected', 'restricted');
    const res = await call(
      'POST',
      '/v1/tools/res_rejected/versions/1.0.0/review',
      { definition_hash: hash, decision: 'rejected', notes: 'not needed' },
      token,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal((res.body.review as { status: string }).status, 'rejected');
  });
});
