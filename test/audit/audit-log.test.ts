/**
 * The chained audit log on every backend, as an admin and an agent see it over REST: calls and
 * administrative events (registrations, grants, approvals…) land in one chain; checkpoints are
 * signed C2SP notes whose roots the RFC 9162 proofs from /v1/audit/proof/* verify against; the
 * audit routes are admin-only; bad proof requests are refused and change nothing; and on
 * PostgreSQL two gateways appending at once keep one gap-free total order.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Gateway } from '../../src/host/toolgate.js';
import {
  AuditLog,
  DEFAULT_ORIGIN,
  generateNoteSigner,
  openNote,
  parseCheckpointText,
  parseVerifierKey,
  verifyConsistency,
  verifyInclusion,
} from '../../src/records/audit/index.js';
import { appendEvent, openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import { deniedRecord } from '../support/fixtures.js';
import { approvePendingReviews } from '../support/reviews.js';
import { openWorld, type World } from '../support/world.js';

const ADMIN_TOKEN = 'audit-test-admin-token-0123456789abcdef';
const admin = { id: 'test-admin', via: 'library' } as const;

for (const backend of backends()) {
  describe(`audit log on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let base: string;
    let agentKey: string;
    let url: string;

    async function get(
      path: string,
      token: string | null = ADMIN_TOKEN,
      // biome-ignore lint/suspicious/noExplicitAny: JSON replies are asserted field by field
    ): Promise<{ status: number; body: any }> {
      const res = await fetch(`${base}${path}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      return { status: res.status, body: await res.json() };
    }

    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: { audit: { checkpointEvery: 5, checkpointIntervalMs: 0 } },
      });
      ({ tg, base } = world);
      url = world.db;
      await tg.config.applyText(readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8'), admin);
      await approvePendingReviews(tg.admin);
      agentKey = (await tg.keys.issue('support-bot', admin)).apiKey;
      const session = await tg.sessions.open('support-bot');
      for (let i = 0; i < 12; i++) {
        const d = await tg.gate.invoke(
          { agentId: 'support-bot', sessionId: session.id },
          'search_tickets',
          { query: `refund ${i}` },
        );
        assert.equal(d.kind, 'allow', JSON.stringify(d));
      }
      await tg.gate.flush();
      await tg.audit.checkpoint();
    });

    after(async () => {
      await world?.close();
    });

    test('calls and administrative events are one chain that verifies', async () => {
      const report = await tg.audit.verify();
      assert.equal(report.ok, true, JSON.stringify(report.problems));
      assert.equal(report.unsignedRecords, 0);
      assert.ok(report.records > 24, JSON.stringify(report));
      assert.ok(report.checkpoints >= 1, JSON.stringify(report));
    });

    test('GET /v1/audit/checkpoint is a signed tlog-checkpoint note under the service key', async () => {
      const { status, body } = await get('/v1/audit/checkpoint');
      assert.equal(status, 200);
      const opened = openNote(body.checkpoint.note, [parseVerifierKey(body.verifierKey)]);
      assert.ok(opened.ok);
      const cp = parseCheckpointText(opened.ok ? opened.text : '');
      assert.equal(cp?.origin, DEFAULT_ORIGIN);
      assert.equal(cp?.size, body.checkpoint.treeSize);
      assert.equal(cp?.root.toString('hex'), body.checkpoint.rootHash);
      assert.match(body.checkpoint.note, /\n\n\u2014 toolgate\.local\/audit [A-Za-z0-9+/=]+\n$/);
    });

    test('inclusion proofs (by seq and by leaf hash) verify against the checkpoint root', async () => {
      const cp = (await get('/v1/audit/checkpoint')).body.checkpoint;
      for (const seq of [1, 2, Math.floor(cp.treeSize / 2), cp.treeSize]) {
        const { status, body } = await get(`/v1/audit/proof/inclusion?seq=${seq}`);
        assert.equal(status, 200, JSON.stringify(body));
        assert.equal(body.treeSize, cp.treeSize);
        assert.equal(body.rootHash, cp.rootHash);
        const proof = body.proof.map((h: string) => Buffer.from(h, 'hex'));
        const leaf = Buffer.from(body.leafHash, 'hex');
        assert.ok(
          verifyInclusion(seq - 1, cp.treeSize, leaf, proof, Buffer.from(cp.rootHash, 'hex')),
        );
        const byHash = await get(`/v1/audit/proof/inclusion?hash=${body.leafHash}`);
        assert.deepEqual(byHash.body, body);
      }
    });

    test('a consistency proof links an older tree size to the checkpoint', async () => {
      const cp = (await get('/v1/audit/checkpoint')).body.checkpoint;
      const older = (await get(`/v1/audit/proof/inclusion?seq=1&size=7`)).body.rootHash;
      const { status, body } = await get(`/v1/audit/proof/consistency?from=7`);
      assert.equal(status, 200);
      assert.equal(body.fromRoot, older);
      assert.equal(body.toRoot, cp.rootHash);
      const proof = body.proof.map((h: string) => Buffer.from(h, 'hex'));
      assert.ok(
        verifyConsistency(
          7,
          cp.treeSize,
          Buffer.from(older, 'hex'),
          Buffer.from(cp.rootHash, 'hex'),
          proof,
        ),
      );
      assert.equal(
        verifyConsistency(7, cp.treeSize, Buffer.alloc(32), Buffer.from(cp.rootHash, 'hex'), proof),
        false,
      );
    });

    test('the audit routes are admin-only: no token or an agent key is refused', async () => {
      for (const path of [
        '/v1/audit/checkpoint',
        '/v1/audit/proof/inclusion?seq=1',
        '/v1/audit/proof/consistency?from=1',
      ]) {
        assert.equal((await get(path, null)).status, 401);
        assert.equal((await get(path, agentKey)).status, 401);
        assert.equal((await get(path)).status, 200);
      }
    });

    test('bad proof requests get a structured refusal', async () => {
      const tail = (await get('/v1/audit/checkpoint')).body.checkpoint.treeSize;
      const cases: [string, number, string][] = [
        ['/v1/audit/proof/inclusion?seq=0', 400, 'INPUT_INVALID'],
        ['/v1/audit/proof/inclusion', 400, 'INPUT_INVALID'],
        [`/v1/audit/proof/inclusion?seq=${tail + 1000}`, 404, 'AUDIT_RECORD_NOT_FOUND'],
        [`/v1/audit/proof/inclusion?hash=${'ab'.repeat(32)}`, 404, 'AUDIT_RECORD_NOT_FOUND'],
        ['/v1/audit/proof/inclusion?hash=xyz', 400, 'INPUT_INVALID'],
        [`/v1/audit/proof/inclusion?seq=5&size=${tail + 1000}`, 400, 'INPUT_INVALID'],
        [`/v1/audit/proof/consistency?from=${tail + 1}`, 400, 'INPUT_INVALID'],
        ['/v1/audit/proof/consistency', 400, 'INPUT_INVALID'],
      ];
      for (const [path, status, code] of cases) {
        const res = await get(path);
        assert.equal(res.status, status, `${path}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, code, path);
      }
      assert.equal((await tg.audit.verify()).ok, true);
    });

    if (backend.name === 'postgres') {
      test('two gateways appending at once keep one gap-free total order (advisory lock)', async () => {
        const other = await openStore(url);
        const mine = await openStore(url);
        try {
          const logs = [other, mine].map(
            (s) =>
              new AuditLog(s, {
                signer: generateNoteSigner(DEFAULT_ORIGIN).signer,
                checkpointEvery: 50,
                checkpointIntervalMs: 0,
              }),
          );
          const rec = (i: number) =>
            deniedRecord(`c-${i}`, i, { agentId: 'a', durationMs: Math.random() });
          await Promise.all([
            ...Array.from({ length: 200 }, (_, i) =>
              (logs[i % 2] as AuditLog).writer.append(rec(i)),
            ),
            ...Array.from({ length: 20 }, (_, i) =>
              appendEvent((i % 2 ? other : mine).db, admin, new Date(), {
                action: 'test.event',
                subject: `s${i}`,
                details: { i },
              }),
            ),
          ]);
          for (const l of logs) await l.close();
          const report = await tg.audit.verify({
            keys: [tg.audit.verifierKey ?? ''],
          });
          // Checkpoints by the other gateways' keys are not trusted here: only chain problems count.
          const chain = report.problems.filter((p) => !p.kind.startsWith('checkpoint_signature'));
          assert.deepEqual(chain, []);
          assert.equal(report.lastSeq, report.records);
        } finally {
          await other.close();
          await mine.close();
        }
      });
    }
  });
}
