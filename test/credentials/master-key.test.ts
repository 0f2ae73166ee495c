/**
 * Where the master key comes from (C11): TOOLGATE_MASTER_KEY, TOOLGATE_MASTER_KEY_FILE
 * or `master.key` in the data folder (created 0600 once, never overwritten); clear refusals for
 * a key of the wrong length, non-base64 text, a file others can read or a missing configured
 * file; and a key object that never prints itself.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { inspect } from 'node:util';
import {
  configuredMasterKey,
  loadMasterKey,
  MasterKey,
} from '../../src/domain/credentials/index.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-key-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function refusedWith(reason: string, message?: RegExp) {
  return (err: Error & { code?: string; details?: { reason?: string } }) => {
    assert.equal(err.code, 'MASTER_KEY_INVALID');
    assert.equal(err.details?.reason, reason);
    if (message) assert.match(err.message, message);
    return true;
  };
}

describe('master key', () => {
  test('first use creates master.key in the data folder, 0600, and later uses read the same key', () => {
    const dir = join(tempDir(), 'data');
    const first = loadMasterKey({ dataDir: dir, env: {} });
    const path = join(dir, 'master.key');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64').length, 32);
    const again = loadMasterKey({ dataDir: dir, env: {} });
    assert.equal(again.keyId, first.keyId);
    assert.match(first.keyId, /^[0-9a-f]{16}$/);
  });

  test('a master.key that group or others can read is refused, not used', () => {
    const dir = tempDir();
    loadMasterKey({ dataDir: dir, env: {} });
    chmodSync(join(dir, 'master.key'), 0o644);
    assert.throws(
      () => loadMasterKey({ dataDir: dir, env: {} }),
      refusedWith('file_permissions', /chmod 600/),
    );
  });

  test('TOOLGATE_MASTER_KEY (base64 of 32 bytes) wins and creates no file', () => {
    const dir = tempDir();
    const raw = randomBytes(32).toString('base64');
    const key = loadMasterKey({ dataDir: dir, env: { TOOLGATE_MASTER_KEY: raw } });
    assert.equal(key.keyId, MasterKey.fromBase64(raw, 'test').keyId);
    assert.throws(() => statSync(join(dir, 'master.key')));
  });

  test('a key of the wrong length is refused, saying the length and never the key', () => {
    for (const bytes of [16, 31, 33, 64]) {
      const raw = randomBytes(bytes).toString('base64');
      assert.throws(
        () => loadMasterKey({ dataDir: tempDir(), env: { TOOLGATE_MASTER_KEY: raw } }),
        (err: Error) => {
          refusedWith('wrong_length', new RegExp(`is ${bytes} bytes; it must be 32`))(err);
          assert.equal(err.message.includes(raw), false);
          return true;
        },
      );
    }
  });

  test('text that is not base64 is refused', () => {
    assert.throws(
      () =>
        loadMasterKey({
          dataDir: tempDir(),
          env: { TOOLGATE_MASTER_KEY: 'correct horse battery staple, not base64!!' },
        }),
      refusedWith('not_base64', /TOOLGATE_MASTER_KEY is not base64/),
    );
  });

  test('TOOLGATE_MASTER_KEY_FILE is read (newline tolerated) and must exist: a typo never starts a new key', () => {
    const dir = tempDir();
    const path = join(dir, 'custom.key');
    const raw = randomBytes(32).toString('base64');
    writeFileSync(path, `${raw}\n`, { mode: 0o600 });
    const key = loadMasterKey({ dataDir: dir, env: { TOOLGATE_MASTER_KEY_FILE: path } });
    assert.equal(key.keyId, MasterKey.fromBase64(raw, 't').keyId);
    const missing = join(dir, 'typo.key');
    assert.throws(
      () => loadMasterKey({ dataDir: dir, env: { TOOLGATE_MASTER_KEY_FILE: missing } }),
      refusedWith('file_missing', /does not exist/),
    );
    assert.throws(() => statSync(missing));
    assert.throws(() => statSync(join(dir, 'master.key')));
  });

  test('library use without any configured key is refused with how to configure one', () => {
    assert.throws(
      () => configuredMasterKey({}),
      refusedWith('not_configured', /TOOLGATE_MASTER_KEY/),
    );
  });

  test('a key never prints its bytes: JSON, inspect and string conversion show the key id only', () => {
    const key = MasterKey.generate();
    const b64 = key.toBase64();
    const hex = key.bytes().toString('hex');
    for (const shown of [JSON.stringify({ key }), inspect(key), inspect({ nested: { key } })]) {
      assert.equal(shown.includes(b64) || shown.includes(hex), false, shown);
      assert.ok(shown.includes(key.keyId));
    }
  });

  test('different keys have different key ids', () => {
    assert.notEqual(MasterKey.generate().keyId, MasterKey.generate().keyId);
  });
});
