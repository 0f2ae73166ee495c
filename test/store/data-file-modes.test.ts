/**
 * Every file toolgate keeps is private to its owner (0600, folders 0700), whatever the umask: the
 * SQLite database and its -wal/-shm files (also when SQLite creates them again after a close), an
 * existing database others could read, and the data folder's keys, token and approvers' secrets as
 * the CLI creates them under `umask 000`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { loadOrCreateAdminToken } from '../../src/domain/identity/index.js';
import { openStore } from '../../src/records/store/index.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

const run = promisify(execFile);
const mode = (path: string) => statSync(path).mode & 0o777;

describe('data files are created 0600', () => {
  let dir: string;
  let saved: number;
  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-modes-'));
    // The most permissive umask: whatever is private below is private by toolgate's choice.
    saved = process.umask(0o000);
  });
  after(() => {
    process.umask(saved);
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('a new SQLite database, its -wal and -shm files, and the ones SQLite makes again after a close, are 0600', async () => {
    const db = join(dir, 'fresh', 'tg.db');
    const store = await openStore(`sqlite:${db}`);
    // A write, so the WAL holds something.
    await store.db.schema.createTable('t').addColumn('a', 'integer').execute();
    assert.equal(mode(join(dir, 'fresh')), 0o700);
    for (const f of [db, `${db}-wal`, `${db}-shm`]) {
      assert.ok(existsSync(f), `${f} exists`);
      assert.equal(mode(f), 0o600, f);
    }
    await store.close();
    // SQLite removes -wal and -shm when the last connection closes and creates them on reopen.
    const again = await openStore(`sqlite:${db}`);
    await again.db.schema.createTable('t2').addColumn('a', 'integer').execute();
    for (const f of [db, `${db}-wal`, `${db}-shm`]) assert.equal(mode(f), 0o600, f);
    await again.close();
  });

  test('an existing database others can read is narrowed to 0600 on open, with its leftover WAL', async () => {
    const db = join(dir, 'old.db');
    const first = await openStore(`sqlite:${db}`);
    await first.close();
    // The close checkpointed everything into the database and removed the WAL (the background
    // checkpointer's connection closes first), so the empty WAL written below loses nothing.
    assert.equal(existsSync(`${db}-wal`), false, 'no WAL is left after a close');
    chmodSync(db, 0o644);
    writeFileSync(`${db}-wal`, '');
    chmodSync(`${db}-wal`, 0o666);
    const store = await openStore(`sqlite:${db}`);
    await store.db.schema.createTable('t').addColumn('a', 'integer').execute();
    for (const f of [db, `${db}-wal`, `${db}-shm`]) assert.equal(mode(f), 0o600, f);
    await store.close();
  });

  test('the admin token file is 0600 under umask 000', () => {
    const path = join(dir, 'token-dir', 'admin-token');
    assert.equal(loadOrCreateAdminToken(path).created, true);
    assert.equal(mode(path), 0o600);
    assert.equal(mode(join(dir, 'token-dir')), 0o700);
  });

  test('every file and folder the CLI creates (database, keys, approvers, master key) is private', async () => {
    const home = join(dir, 'cli');
    const data = join(home, 'data');
    const db = `sqlite:${join(home, 'db', 'tg.db')}`;
    const cli = (args: string[], input?: string) => {
      const child = run(
        '/bin/sh',
        [
          '-c',
          'umask 000; exec "$@"',
          'sh',
          process.execPath,
          MAIN,
          '--db',
          db,
          '--data-dir',
          data,
          ...args,
        ],
        { env: cleanEnv(), timeout: 30_000 },
      );
      if (input !== undefined) {
        child.child.stdin?.end(input);
      }
      return child;
    };
    // A second factor belongs to an operator account: create it, then enrol it.
    await cli(['operators', 'create', 'alice', '--roles', 'approver']);
    await cli(['approvers', 'enroll', 'alice']);
    await cli(['secrets', 'set', 'api', '--tool', 'billing'], 'a-secret-value-0123456789');
    await cli(['audit', 'checkpoint']);
    const files: string[] = [];
    const walk = (d: string) => {
      assert.equal(mode(d) & 0o077, 0, `${d} is ${mode(d).toString(8)}`);
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(data);
    walk(join(home, 'db'));
    for (const name of ['master.key', 'audit-signing-key.pem']) {
      assert.ok(files.includes(join(data, name)), `${name} was created`);
    }
    // Second factors are sealed in the database, never a file beside it.
    assert.ok(!files.includes(join(data, 'approvers.json')), 'no approvers.json');
    assert.ok(files.includes(join(home, 'db', 'tg.db')));
    for (const f of files) assert.equal(mode(f), 0o600, `${f} is ${mode(f).toString(8)}`);
  });
});
