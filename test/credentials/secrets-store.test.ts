/**
 * The secrets store on every backend (C11): values sealed with AES-256-GCM and bound to
 * their tool, name, environment and version; tampering and the wrong master key refused with a
 * clear error; rotation, deletion and listing; events that never carry a value; and a database
 * file in which the value cannot be found.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey, SecretsService } from '../../src/domain/credentials/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const VALUE = 'sk_live_StoreRoundTrip_6f1d2c9a8b7e';
const OTHER = 'sk_live_OtherSecretValue_0a9b8c7d';

/** The value and the encodings someone grepping a dump would try. */
function forms(value: string): string[] {
  return [value, Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')];
}

for (const backend of backends()) {
  describe(`secrets store on ${backend.name}`, () => {
    let store: Store;
    let url: string;
    let drop: () => Promise<void>;
    const key = MasterKey.generate();
    let secrets: SecretsService;

    before(async () => {
      const fresh = await backend.fresh();
      url = fresh.url;
      drop = fresh.drop;
      store = await openStore(url);
      secrets = new SecretsService(store.db, key, () => new Date('2026-06-01T10:00:00Z'));
    });
    after(async () => {
      await store.close();
      await drop();
    });

    const row = (toolId: string, name: string, environment = 'default') =>
      store.db
        .selectFrom('secrets')
        .selectAll()
        .where('tool_id', '=', toolId)
        .where('name', '=', name)
        .where('environment', '=', environment)
        .executeTakeFirstOrThrow();

    test('a set secret opens to the same value and is stored only as ciphertext', async () => {
      const info = await secrets.set({ toolId: 'billing', name: 'stripe' }, VALUE, admin);
      assert.equal(info.version, 1);
      assert.equal(info.environment, 'default');
      assert.equal(info.key_id, key.keyId);
      assert.equal(JSON.stringify(info).includes(VALUE), false);
      const opened = await secrets.open({ toolId: 'billing', name: 'stripe' });
      assert.deepEqual(opened, { value: VALUE, version: 1 });
      const stored = await row('billing', 'stripe');
      const dump = JSON.stringify(stored);
      for (const f of forms(VALUE)) assert.equal(dump.includes(f), false, `row holds ${f}`);
      assert.equal(Buffer.from(stored.nonce, 'base64').length, 12);
      assert.equal(Buffer.from(stored.tag, 'base64').length, 16);
    });

    test('each encryption uses a fresh nonce: the same value sealed twice differs', async () => {
      await secrets.set({ toolId: 'billing', name: 'twin-a' }, VALUE, admin);
      await secrets.set({ toolId: 'billing', name: 'twin-b' }, VALUE, admin);
      const a = await row('billing', 'twin-a');
      const b = await row('billing', 'twin-b');
      assert.notEqual(a.nonce, b.nonce);
      assert.notEqual(a.ciphertext, b.ciphertext);
    });

    test('one secret per tool, name and environment: set twice is refused, rotate is the way', async () => {
      await assert.rejects(secrets.set({ toolId: 'billing', name: 'stripe' }, OTHER, admin), {
        code: 'SECRET_EXISTS',
      });
      assert.equal((await secrets.open({ toolId: 'billing', name: 'stripe' }))?.value, VALUE);
      // The same name in another environment, or for another tool, is another secret.
      await secrets.set(
        { toolId: 'billing', name: 'stripe', environment: 'staging' },
        OTHER,
        admin,
      );
      assert.equal(
        (await secrets.open({ toolId: 'billing', name: 'stripe', environment: 'staging' }))?.value,
        OTHER,
      );
      assert.equal((await secrets.open({ toolId: 'billing', name: 'stripe' }))?.value, VALUE);
    });

    for (const column of ['ciphertext', 'nonce', 'tag'] as const) {
      test(`a flipped bit in the ${column} is detected and the secret is not used`, async () => {
        const name = `tamper-${column}`;
        await secrets.set({ toolId: 'billing', name }, VALUE, admin);
        const original = (await row('billing', name))[column];
        const bytes = Buffer.from(original, 'base64');
        bytes[0] = (bytes[0] ?? 0) ^ 0x01;
        await store.db
          .updateTable('secrets')
          .set({ [column]: bytes.toString('base64') })
          .where('tool_id', '=', 'billing')
          .where('name', '=', name)
          .execute();
        await assert.rejects(secrets.open({ toolId: 'billing', name }), (err: Error) => {
          assert.equal((err as { code?: string }).code, 'SECRET_UNREADABLE');
          assert.match(err.message, /failed authentication/);
          assert.equal(err.message.includes(VALUE), false);
          return true;
        });
        // Untampered neighbours still open.
        assert.equal((await secrets.open({ toolId: 'billing', name: 'stripe' }))?.value, VALUE);
      });
    }

    test('a truncated nonce or tag is refused, not passed to the cipher', async () => {
      await secrets.set({ toolId: 'billing', name: 'short-tag' }, VALUE, admin);
      const stored = await row('billing', 'short-tag');
      await store.db
        .updateTable('secrets')
        .set({ tag: Buffer.from(stored.tag, 'base64').subarray(0, 4).toString('base64') })
        .where('tool_id', '=', 'billing')
        .where('name', '=', 'short-tag')
        .execute();
      await assert.rejects(secrets.open({ toolId: 'billing', name: 'short-tag' }), {
        code: 'SECRET_UNREADABLE',
      });
    });

    test("a ciphertext copied onto another tool's secret fails to open (bound to tool and name)", async () => {
      // Tool "mallory" has a secret of its own; an attacker with database access copies billing's
      // sealed row over it, hoping mallory will be handed billing's key.
      await secrets.set({ toolId: 'mallory', name: 'stripe' }, OTHER, admin);
      const victim = await row('billing', 'stripe');
      await store.db
        .updateTable('secrets')
        .set({ nonce: victim.nonce, ciphertext: victim.ciphertext, tag: victim.tag })
        .where('tool_id', '=', 'mallory')
        .where('name', '=', 'stripe')
        .execute();
      await assert.rejects(secrets.open({ toolId: 'mallory', name: 'stripe' }), {
        code: 'SECRET_UNREADABLE',
      });
      // Copied onto another name of the same tool, or another environment: also refused.
      await secrets.set({ toolId: 'billing', name: 'other-name' }, OTHER, admin);
      await store.db
        .updateTable('secrets')
        .set({ nonce: victim.nonce, ciphertext: victim.ciphertext, tag: victim.tag })
        .where('tool_id', '=', 'billing')
        .where((eb) =>
          eb.or([
            eb('name', '=', 'other-name'),
            eb.and([eb('name', '=', 'stripe'), eb('environment', '=', 'staging')]),
          ]),
        )
        .execute();
      await assert.rejects(secrets.open({ toolId: 'billing', name: 'other-name' }), {
        code: 'SECRET_UNREADABLE',
      });
      await assert.rejects(
        secrets.open({ toolId: 'billing', name: 'stripe', environment: 'staging' }),
        { code: 'SECRET_UNREADABLE' },
      );
    });

    test('an old version restored over a rotated one fails to open (bound to the version)', async () => {
      await secrets.set({ toolId: 'billing', name: 'rolled' }, VALUE, admin);
      const v1 = await row('billing', 'rolled');
      await secrets.rotate({ toolId: 'billing', name: 'rolled' }, OTHER, admin);
      await store.db
        .updateTable('secrets')
        .set({ nonce: v1.nonce, ciphertext: v1.ciphertext, tag: v1.tag })
        .where('tool_id', '=', 'billing')
        .where('name', '=', 'rolled')
        .execute();
      await assert.rejects(secrets.open({ toolId: 'billing', name: 'rolled' }), {
        code: 'SECRET_UNREADABLE',
      });
      // (Restoring the whole row, version column included, is a rollback the database alone
      // cannot refuse; the rotation event records the version that should be current.)
    });

    test('the wrong master key is reported as the wrong key, naming both key ids, never a value', async () => {
      const other = new SecretsService(store.db, MasterKey.generate());
      await assert.rejects(other.open({ toolId: 'billing', name: 'stripe' }), (err: Error) => {
        const e = err as Error & { code: string; details: Record<string, unknown> };
        assert.equal(e.code, 'MASTER_KEY_INVALID');
        assert.equal(e.details.reason, 'wrong_key');
        assert.equal(e.details.expectedKeyId, key.keyId);
        assert.match(e.message, /sealed with master key [0-9a-f]{16}.*loaded is [0-9a-f]{16}/);
        assert.equal(JSON.stringify({ m: e.message, d: e.details }).includes(VALUE), false);
        return true;
      });
    });

    test('a key id column changed to match the loaded key still fails authentication', async () => {
      const wrong = MasterKey.generate();
      await store.db
        .updateTable('secrets')
        .set({ key_id: wrong.keyId })
        .where('tool_id', '=', 'billing')
        .where('name', '=', 'twin-a')
        .execute();
      const other = new SecretsService(store.db, wrong);
      await assert.rejects(other.open({ toolId: 'billing', name: 'twin-a' }), {
        code: 'SECRET_UNREADABLE',
      });
      await store.db
        .updateTable('secrets')
        .set({ key_id: key.keyId })
        .where('tool_id', '=', 'billing')
        .where('name', '=', 'twin-a')
        .execute();
    });

    test('set and rotate under another master key are refused: one store never mixes keys', async () => {
      const other = new SecretsService(store.db, MasterKey.generate());
      const before = await secrets.list();
      await assert.rejects(other.set({ toolId: 'billing', name: 'mixed' }, VALUE, admin), {
        code: 'MASTER_KEY_INVALID',
      });
      await assert.rejects(other.rotate({ toolId: 'billing', name: 'stripe' }, OTHER, admin), {
        code: 'MASTER_KEY_INVALID',
      });
      assert.deepEqual(await secrets.list(), before);
      assert.equal((await secrets.open({ toolId: 'billing', name: 'stripe' }))?.value, VALUE);
    });

    test('rotate writes the next version; only the new value opens afterwards', async () => {
      await secrets.set({ toolId: 'search', name: 'api' }, VALUE, admin);
      const before = await row('search', 'api');
      const info = await secrets.rotate({ toolId: 'search', name: 'api' }, OTHER, admin);
      assert.equal(info.version, 2);
      assert.equal(info.rotated_by, admin.id);
      assert.ok(info.rotated_at);
      assert.deepEqual(await secrets.open({ toolId: 'search', name: 'api' }), {
        value: OTHER,
        version: 2,
      });
      const after = await row('search', 'api');
      assert.notEqual(after.ciphertext, before.ciphertext);
      assert.notEqual(after.nonce, before.nonce);
      const third = await secrets.rotate({ toolId: 'search', name: 'api' }, VALUE, admin);
      assert.equal(third.version, 3);
      await assert.rejects(secrets.rotate({ toolId: 'search', name: 'missing' }, OTHER, admin), {
        code: 'SECRET_NOT_FOUND',
      });
    });

    test('concurrent rotations each get their own version; the last one opens', async () => {
      await secrets.set({ toolId: 'search', name: 'raced' }, VALUE, admin);
      const values = [0, 1, 2, 3, 4].map((i) => `concurrent-value-${i}-abcdef`);
      const infos = await Promise.all(
        values.map((v) => secrets.rotate({ toolId: 'search', name: 'raced' }, v, admin)),
      );
      assert.deepEqual(infos.map((i) => i.version).sort(), [2, 3, 4, 5, 6]);
      const last = infos.find((i) => i.version === 6);
      assert.ok(last);
      const opened = await secrets.open({ toolId: 'search', name: 'raced' });
      assert.equal(opened?.version, 6);
      assert.equal(opened?.value, values[infos.indexOf(last)]);
    });

    test('delete removes the secret; it no longer opens and a second delete is not found', async () => {
      await secrets.set({ toolId: 'search', name: 'gone' }, VALUE, admin);
      const deleted = await secrets.delete({ toolId: 'search', name: 'gone' }, admin);
      assert.equal(deleted.name, 'gone');
      assert.equal(await secrets.open({ toolId: 'search', name: 'gone' }), null);
      await assert.rejects(secrets.delete({ toolId: 'search', name: 'gone' }, admin), {
        code: 'SECRET_NOT_FOUND',
      });
    });

    test('list shows names, environments, versions, dates and key ids, never values', async () => {
      const list = await secrets.list();
      assert.ok(list.length >= 5);
      const text = JSON.stringify(list);
      assert.equal(text.includes(VALUE) || text.includes(OTHER), false);
      for (const s of list) {
        assert.deepEqual(Object.keys(s).sort(), [
          'created_at',
          'created_by',
          'environment',
          'key_id',
          'name',
          'rotated_at',
          'rotated_by',
          'tool_id',
          'version',
        ]);
      }
      const staging = await secrets.list({ environment: 'staging' });
      assert.deepEqual(
        staging.map((s) => `${s.tool_id}/${s.name}`),
        ['billing/stripe'],
      );
      assert.ok((await secrets.list({ toolId: 'search' })).every((s) => s.tool_id === 'search'));
    });

    test('set, rotate and delete are recorded as events without the value', async () => {
      const events = await store.db
        .selectFrom('events')
        .selectAll()
        .where('action', 'like', 'secret.%')
        // In the order written: `find` below wants the first rotation (version 2, not 3).
        .orderBy('seq')
        .execute();
      const actions = new Set(events.map((e) => e.action));
      assert.deepEqual([...actions].sort(), ['secret.delete', 'secret.rotate', 'secret.set']);
      const rotation = events.find(
        (e) => e.subject === 'secret:search/api@default' && e.action === 'secret.rotate',
      );
      assert.ok(rotation);
      assert.equal(JSON.parse(rotation.details).version, 2);
      const text = JSON.stringify(events);
      for (const f of [...forms(VALUE), ...forms(OTHER)]) assert.equal(text.includes(f), false);
    });

    test('bad input is refused with every problem and changes nothing', async () => {
      const count = async () => (await secrets.list()).length;
      const n = await count();
      await assert.rejects(
        secrets.set({ toolId: 'Bad Tool', name: '../x', environment: 'PROD!' }, VALUE, admin),
        (err: Error & { code?: string; details?: { problems: { pointer: string }[] } }) => {
          assert.equal(err.code, 'INPUT_INVALID');
          assert.deepEqual(
            err.details?.problems.map((p) => p.pointer),
            ['/tool', '/name', '/environment'],
          );
          return true;
        },
      );
      for (const bad of ['short', '', 'has\0nul-byte', 'x'.repeat(70_000), '\ud800lonesurrogate']) {
        await assert.rejects(secrets.set({ toolId: 'search', name: 'bad' }, bad, admin), {
          code: 'INPUT_INVALID',
        });
      }
      assert.equal(await count(), n);
    });

    if (backend.name === 'sqlite') {
      test('the value is nowhere in the SQLite files (database and WAL)', async () => {
        const path = url.slice('sqlite:'.length);
        const dir = dirname(path);
        const files = readdirSync(dir).filter((f) => f.startsWith('toolgate.db'));
        assert.ok(files.length >= 1);
        for (const f of files) {
          const bytes = readFileSync(join(dir, f));
          for (const form of [...forms(VALUE), ...forms(OTHER)]) {
            assert.equal(bytes.includes(Buffer.from(form)), false, `${f} holds ${form}`);
          }
        }
      });
    }
  });
}
