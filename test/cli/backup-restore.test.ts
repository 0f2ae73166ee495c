/**
 * `toolgate backup` while `serve` runs and takes calls, then `toolgate restore` into a new folder:
 * the restored log verifies, a call on the restored folder runs and is chained after the restored
 * records. The neighbours: a backup into a folder that holds anything, a restore into a data folder
 * that holds anything, a backup file altered by one byte and a backup from a newer schema are all
 * refused, with one line and a non-zero exit, and nothing is written.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { backends } from '../support/backends.js';
import {
  type CliRun,
  cleanEnv,
  ensureBuilt,
  listeningUrl,
  MAIN,
  runCli,
  spawnServe,
} from '../support/cli.js';
import { restClient } from '../support/world.js';

let dir = '';
/** The live folder (`serve` on it), the backup, and the folder restored from it. */
let live = '';
let bk = '';
let restored = '';
let apiKey = '';
const servers: ChildProcess[] = [];

async function serveOn(folder: string): Promise<{ base: string; server: ChildProcess }> {
  const server = spawnServe(folder);
  servers.push(server);
  return { base: await listeningUrl(server), server };
}

async function stop(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  await exited;
}

/** Opens a session as the agent and makes `n` allowed calls; returns how many answered 200. */
async function calls(base: string, n: number): Promise<number> {
  const call = restClient(
    () => base,
    () => apiKey,
  );
  const session = await call('POST', '/v1/sessions', {});
  assert.equal(session.status, 201, session.text);
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const r = await call('POST', `/v1/sessions/${String(session.body.id)}/calls`, {
      tool: 'search_tickets',
      arguments: { query: `refund ${i}` },
    });
    assert.equal(r.status, 200, r.text);
    ok += 1;
  }
  return ok;
}

async function verified(folder: string): Promise<number> {
  const run = await runCli(folder, ['--json', 'audit', 'verify']);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  return (JSON.parse(run.stdout) as { records: number }).records;
}

const mode = (path: string) => statSync(path).mode & 0o777;

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-backup-'));
  live = join(dir, 'live');
  bk = join(dir, 'backup');
  restored = join(dir, 'restored');
  mkdirSync(live);
  mkdirSync(restored);
});

after(async () => {
  for (const s of servers) await stop(s);
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('backup while serve takes calls, restore into a new folder: the log verifies and a new call chains after it', async () => {
  const { base, server } = await serveOn(live);
  const created = await runCli(live, ['--json', 'agents', 'create', 'support-bot']);
  assert.equal(created.code, 0, created.stderr);
  apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  assert.equal(await calls(base, 5), 5);

  // The backup runs while the gateway goes on writing calls into its log.
  const writing = calls(base, 20);
  const run = await runCli(live, ['--json', 'backup', bk]);
  assert.equal(await writing, 20);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const { manifest, complete } = JSON.parse(run.stdout) as {
    complete: boolean;
    manifest: {
      dialect: string;
      migrations: string[];
      database: { path: string; sha256: string };
      files: { path: string }[];
      toolgate_version: string;
    };
  };
  assert.equal(complete, true);
  assert.equal(manifest.dialect, 'sqlite');
  assert.ok(manifest.migrations.length > 10);
  assert.equal(manifest.database.path, 'toolgate.db');
  // Every key file the data folder holds (the approval signing key is made at the first
  // approval, so this folder has none yet); the database file in it is the online copy's.
  const keys = readdirSync(join(live, 'data')).filter((f) => !f.startsWith('tg.db'));
  assert.deepEqual(keys.sort(), ['admin-token', 'audit-signing-key.pem', 'master.key']);
  assert.deepEqual(
    manifest.files.map((f) => f.path).sort(),
    keys.map((k) => `data/${k}`),
  );
  assert.equal(mode(bk), 0o700);
  assert.equal(mode(join(bk, 'data')), 0o700);
  for (const f of ['manifest.json', 'toolgate.db', ...manifest.files.map((f) => f.path)]) {
    assert.equal(mode(join(bk, f)), 0o600, f);
  }

  // A second backup into the same folder: refused, the first one untouched.
  const again = await runCli(live, ['backup', bk]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /^error INPUT_INVALID: backup folder .* is not empty/);
  assert.equal(again.stderr.trim().split('\n').length, 1, again.stderr);
  await stop(server);

  const restore = await runCli(restored, ['restore', bk]);
  assert.equal(restore.code, 0, restore.stdout + restore.stderr);
  assert.equal(mode(join(restored, 'data')), 0o700);
  assert.equal(mode(join(restored, 'data', 'master.key')), 0o600);
  const records = await verified(restored);
  assert.ok(records >= 6, `at least the calls before the backup: ${records}`);

  // A restore into a data folder that now holds keys: refused.
  const twice = await runCli(restored, ['restore', bk]);
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, /^error INPUT_INVALID: data folder .* is not empty/);

  // The restored folder serves: the agent's key (hashed in the restored database) still works,
  // and its call is chained after the restored records.
  const again2 = await serveOn(restored);
  assert.equal(await calls(again2.base, 1), 1);
  await stop(again2.server);
  assert.ok((await verified(restored)) > records);
});

test('a backup altered by one byte, or from a newer schema, is refused and nothing is restored', async () => {
  assert.ok(existsSync(join(bk, 'manifest.json')), 'the first test made the backup');
  const tampered = join(dir, 'tampered');
  cpSync(bk, tampered, { recursive: true });
  const key = join(tampered, 'data', 'audit-signing-key.pem');
  const bytes = readFileSync(key);
  bytes[bytes.length - 2] = (bytes[bytes.length - 2] ?? 0) ^ 1;
  writeFileSync(key, bytes);
  const target = join(dir, 'from-tampered');
  mkdirSync(target);
  const run = await runCli(target, ['--json', 'restore', tampered]);
  assert.equal(run.code, 2);
  const { error } = JSON.parse(run.stdout) as {
    error: { code: string; details: { problems: { pointer: string; rule: string }[] } };
  };
  assert.equal(error.code, 'INPUT_INVALID');
  assert.deepEqual(
    error.details.problems.map((p) => [p.pointer, p.rule]),
    [['/data/audit-signing-key.pem', 'backup.hash_mismatch']],
  );
  assert.deepEqual(readdirSync(target), [], 'nothing restored');

  // A --db that names no database (a typo): refused, and no new empty database is made.
  const typo = await runCli(target, [
    '--db',
    `sqlite:${join(dir, 'typo.db')}`,
    'backup',
    join(dir, 'of-nothing'),
  ]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /^error INPUT_INVALID: --db sqlite:\S+typo\.db holds no database/);
  assert.ok(!existsSync(join(dir, 'typo.db')) && !existsSync(join(dir, 'of-nothing')));

  const newer = join(dir, 'newer');
  cpSync(bk, newer, { recursive: true });
  const manifestFile = join(newer, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { migrations: string[] };
  manifest.migrations.push('9999_from_a_newer_version');
  writeFileSync(manifestFile, JSON.stringify(manifest));
  const human = await runCli(target, ['restore', newer]);
  assert.equal(human.code, 5);
  assert.match(human.stderr, /^error STORE_TOO_NEW: .*9999_from_a_newer_version/);
  assert.equal(human.stderr.trim().split('\n').length, 1, human.stderr);
  assert.deepEqual(readdirSync(target), [], 'nothing restored');
});

test('with the master key in TOOLGATE_MASTER_KEY the manifest is authenticated: an edited database with its hashes recomputed, a stripped MAC and a missing or other key are refused (attack round 21, X2)', async () => {
  const key = { TOOLGATE_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
  const other = { TOOLGATE_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') };
  const home = join(dir, 'keyed');
  mkdirSync(home);
  for (const args of [
    ['agents', 'create', 'bot'],
    ['grants', 'add', 'bot', 'tickets:read'],
    ['audit', 'checkpoint'],
  ]) {
    const r = await runCli(home, args, key);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  }
  // A master key file left in the data folder is not the one in use: it stays out of the backup.
  writeFileSync(join(home, 'data', 'master.key'), `${Buffer.alloc(32, 1).toString('base64')}\n`, {
    mode: 0o600,
  });
  const keyed = join(dir, 'keyed-backup');
  const made = await runCli(home, ['--json', 'backup', keyed], key);
  assert.equal(made.code, 0, made.stdout + made.stderr);
  const manifest = JSON.parse(readFileSync(join(keyed, 'manifest.json'), 'utf8')) as {
    authentication: { method: string; key_id: string; mac: string };
    files: { path: string }[];
  };
  assert.equal(manifest.authentication.method, 'hmac-sha256');
  assert.ok(!manifest.files.some((f) => f.path === 'data/master.key'), 'the key is not in it');

  /** A copy of the keyed backup with `change` made to it, its database hash recomputed. */
  const altered = (name: string, change: (copy: string) => void) => {
    const copy = join(dir, name);
    cpSync(keyed, copy, { recursive: true });
    change(copy);
    const file = join(copy, 'manifest.json');
    const m = JSON.parse(readFileSync(file, 'utf8')) as {
      database: { path: string; sha256: string; bytes: number };
    };
    const db = readFileSync(join(copy, m.database.path));
    m.database.sha256 = createHash('sha256').update(db).digest('hex');
    m.database.bytes = db.length;
    writeFileSync(file, JSON.stringify(m));
    return copy;
  };
  let tries = 0;
  const refusedWith = async (from: string, env: NodeJS.ProcessEnv, why: RegExp) => {
    tries += 1;
    const target = join(dir, `into-${from.split('/').pop()}-${tries}`);
    mkdirSync(target);
    const r = await runCli(target, ['--json', 'restore', from], env);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const { error } = JSON.parse(r.stdout) as {
      error: { code: string; message: string; details: { problems: { rule: string }[] } };
    };
    assert.equal(error.code, 'INPUT_INVALID');
    assert.deepEqual(
      error.details.problems.map((p) => p.rule),
      ['backup.unauthentic'],
    );
    assert.match(error.message, why);
    assert.deepEqual(readdirSync(target), [], 'nothing restored');
  };
  // The attack: a privileged grant written straight into the backup's database (through every
  // interface it needs two approvers), the hashes recomputed.
  const granted = altered('keyed-granted', (copy) => {
    const db = new Database(join(copy, 'toolgate.db'));
    db.prepare("UPDATE grants SET capability = 'iam:grant' WHERE agent_id = 'bot'").run();
    db.close();
  });
  await refusedWith(granted, key, /does not match under the master key/);
  // The MAC removed with the edit, or the backup restored without the key or under another one.
  const stripped = join(dir, 'keyed-stripped');
  cpSync(granted, stripped, { recursive: true });
  const sm = JSON.parse(readFileSync(join(stripped, 'manifest.json'), 'utf8'));
  delete sm.authentication;
  writeFileSync(join(stripped, 'manifest.json'), JSON.stringify(sm));
  // Stripped, it holds neither its master key nor a MAC: refused whatever the restore's
  // environment, the key in a file or none at all (attack round 22, Y8).
  const keyFile = join(dir, 'keyed-master.key');
  writeFileSync(keyFile, `${key.TOOLGATE_MASTER_KEY}\n`, { mode: 0o600 });
  for (const env of [key, {}, { TOOLGATE_MASTER_KEY_FILE: keyFile }]) {
    await refusedWith(
      stripped,
      env,
      /authentication is missing, and the backup holds no master key file/,
    );
  }
  await refusedWith(keyed, {}, /set TOOLGATE_MASTER_KEY \(or TOOLGATE_MASTER_KEY_FILE\) to it/);
  await refusedWith(keyed, other, /does not match under the master key/);
  // The key from a file checks the MAC as the variable does: the edit is found, the untouched
  // backup restores.
  await refusedWith(
    granted,
    { TOOLGATE_MASTER_KEY_FILE: keyFile },
    /does not match under the master key/,
  );
  const viaFile = join(dir, 'keyed-restored-file');
  mkdirSync(viaFile);
  const fromFile = await runCli(viaFile, ['restore', keyed], { TOOLGATE_MASTER_KEY_FILE: keyFile });
  assert.equal(fromFile.code, 0, fromFile.stdout + fromFile.stderr);
  assert.match(fromFile.stdout, /authenticated under the master key/);

  // The benign neighbour: the untouched backup, with its key, restores and verifies.
  const target = join(dir, 'keyed-restored');
  mkdirSync(target);
  const ok = await runCli(target, ['restore', keyed], key);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /authenticated under the master key/);
  const grants = await runCli(target, ['--json', 'grants', 'list'], key);
  assert.match(grants.stdout, /tickets:read/);
  assert.doesNotMatch(grants.stdout, /iam:grant/);
  const audit = await runCli(target, ['audit', 'verify'], key);
  assert.equal(audit.code, 0, audit.stdout + audit.stderr);
});

/** The CLI with only `--data-dir` (no `--db`), run in `cwd`. */
function dataDirCli(cwd: string, data: string, args: string[]): Promise<CliRun> {
  return new Promise((done) =>
    execFile(
      process.execPath,
      [MAIN, '--data-dir', data, ...args],
      { cwd, env: cleanEnv() },
      (err, stdout, stderr) => done({ code: err ? Number(err.code) : 0, stdout, stderr }),
    ),
  );
}

/** A copy of the backup with `change` made to it, its manifest's hashes recomputed. */
function alteredBackup(name: string, change: (copy: string) => void): string {
  const copy = join(dir, name);
  cpSync(bk, copy, { recursive: true });
  change(copy);
  const file = join(copy, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
    database: { path: string; sha256: string; bytes: number };
  };
  const db = readFileSync(join(copy, manifest.database.path));
  manifest.database.sha256 = createHash('sha256').update(db).digest('hex');
  manifest.database.bytes = db.length;
  writeFileSync(file, JSON.stringify(manifest));
  return copy;
}

test('backup and restore with only --data-dir use its database; every folder is made 0700; symlinks, a newer database and a too-new serve are refused without leaving files', async () => {
  assert.ok(existsSync(join(bk, 'manifest.json')), 'the first test made the backup');
  const cwd = join(dir, 'cwd');
  const data = join(dir, 'dd-only');
  mkdirSync(cwd);
  mkdirSync(data);
  chmodSync(data, 0o777);
  const restoredRun = await dataDirCli(cwd, data, ['restore', bk]);
  assert.equal(restoredRun.code, 0, restoredRun.stdout + restoredRun.stderr);
  assert.ok(existsSync(join(data, 'toolgate.db')), 'the database is in the data folder');
  assert.deepEqual(readdirSync(cwd), [], 'nothing in the working folder');
  assert.equal(mode(data), 0o700, 'an existing 0777 data folder is narrowed');

  chmodSync(data, 0o755);
  const out = join(dir, 'bk-777');
  mkdirSync(out);
  chmodSync(out, 0o777);
  const backedUp = await dataDirCli(cwd, data, ['--json', 'backup', out]);
  assert.equal(backedUp.code, 0, backedUp.stdout + backedUp.stderr);
  assert.match(
    (JSON.parse(backedUp.stdout) as { manifest: { location: string } }).manifest.location,
    /dd-only\/toolgate\.db$/,
  );
  assert.equal(mode(out), 0o700, 'an existing 0777 backup folder is narrowed');
  assert.equal(mode(data), 0o700, 'the data folder used is narrowed');

  // A symlink inside the backup (a key file, or the data/ folder) is refused.
  const linked = join(dir, 'linked');
  cpSync(bk, linked, { recursive: true });
  const key = join(linked, 'data', 'master.key');
  cpSync(key, join(dir, 'elsewhere.key'));
  rmSync(key);
  symlinkSync(join(dir, 'elsewhere.key'), key);
  const target = join(dir, 'from-linked');
  mkdirSync(target);
  const viaLink = await runCli(target, ['restore', linked]);
  assert.equal(viaLink.code, 2, viaLink.stderr);
  assert.match(viaLink.stderr, /data\/master\.key is not a regular file/);
  assert.ok(!existsSync(join(target, 'data', 'master.key')));

  // The database holds a migration this version lacks, the manifest does not say so.
  const future = alteredBackup('future', (copy) => {
    const db = new Database(join(copy, 'toolgate.db'));
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run(
      '9999_from_a_newer_version',
      new Date().toISOString(),
    );
    db.close();
  });
  const tooNew = await runCli(target, ['restore', future]);
  assert.equal(tooNew.code, 5, tooNew.stderr);
  assert.match(tooNew.stderr, /^error STORE_TOO_NEW: .*9999_from_a_newer_version/);
  assert.ok(!existsSync(join(target, 'tg.db')), 'no database left');
  assert.deepEqual(readdirSync(join(target, 'data')), [], 'no keys left');

  // serve on a newer database changes nothing: no key file is created.
  const newer = join(dir, 'serve-newer');
  mkdirSync(newer);
  cpSync(join(future, 'toolgate.db'), join(newer, 'tg.db'));
  const served = await runCli(newer, ['serve', '--port', '0']);
  assert.equal(served.code, 5, served.stderr);
  assert.match(served.stderr, /STORE_TOO_NEW/);
  assert.deepEqual(existsSync(join(newer, 'data')) ? readdirSync(join(newer, 'data')) : [], []);

  // A backup of that newer database is refused, and the folder it would have made is not left.
  const ofNewer = join(dir, 'backup-of-newer');
  const ofNewerRun = await runCli(newer, ['backup', ofNewer]);
  assert.equal(ofNewerRun.code, 5, ofNewerRun.stderr);
  assert.match(ofNewerRun.stderr, /STORE_TOO_NEW/);
  assert.ok(!existsSync(ofNewer), 'no empty backup folder is left');
});

const pgUrl = process.env.TOOLGATE_TEST_PG_URL;
const requirePg = process.env.TOOLGATE_REQUIRE_PG === '1';

test('on PostgreSQL: backup writes a pg_dump and the keys, restore fills a new empty database, the log verifies; without pg_dump the exact command is printed', {
  skip: pgUrl || requirePg ? false : 'no PostgreSQL (TOOLGATE_TEST_PG_URL)',
}, async () => {
  assert.ok(pgUrl, 'TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  const pg = backends().find((b) => b.name === 'postgres');
  assert.ok(pg);
  const source = await pg.fresh();
  const target = await pg.fresh();
  const folder = join(dir, 'pg');
  const pgCli = (data: string, db: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli(folder, ['--db', db, '--data-dir', data, ...args], env);
  try {
    mkdirSync(folder);
    for (const args of [
      ['agents', 'create', 'support-bot'],
      ['audit', 'checkpoint'],
    ]) {
      const run = await pgCli(join(folder, 'live'), source.url, args);
      assert.equal(run.code, 0, run.stderr);
    }
    const records = (
      JSON.parse(
        (await pgCli(join(folder, 'live'), source.url, ['--json', 'audit', 'verify'])).stdout,
      ) as {
        records: number;
      }
    ).records;

    // Without pg_dump on PATH: the keys are kept, the exact command is printed, exit non-zero.
    const missing = await pgCli(
      join(folder, 'live'),
      source.url,
      ['backup', join(folder, 'no-dump')],
      {
        PATH: '/nonexistent',
      },
    );
    assert.equal(missing.code, 5, missing.stdout + missing.stderr);
    assert.match(
      missing.stdout,
      /INCOMPLETE: pg_dump is not installed here; write the database into the backup with:\n {2}pg_dump --format=custom --no-owner --no-privileges --file=\S+no-dump\/postgres\.dump --dbname='postgres:\/\/toolgate@127\.0\.0\.1:\d+\/tg_[0-9a-f]+'/,
    );

    // Finished by hand, its dump is covered by no hash or MAC: restore says so, not "checked"
    // (attack round 22, Y10).
    const handDump = await pgCli(join(folder, 'from-hand'), target.url, [
      'restore',
      join(folder, 'no-dump'),
    ]);
    assert.equal(handDump.code, 5, handDump.stdout + handDump.stderr);
    assert.match(handDump.stdout, /dump is not part of it: .*covered by no hash or MAC/);

    const run = await pgCli(join(folder, 'live'), source.url, [
      '--json',
      'backup',
      join(folder, 'bk'),
    ]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const { manifest } = JSON.parse(run.stdout) as {
      manifest: { dialect: string; database: { path: string } };
    };
    assert.equal(manifest.dialect, 'postgres');
    assert.equal(manifest.database.path, 'postgres.dump');
    assert.equal(mode(join(folder, 'bk', 'postgres.dump')) & 0o077, 0);

    const restore = await pgCli(join(folder, 'restored'), target.url, [
      'restore',
      join(folder, 'bk'),
    ]);
    assert.equal(restore.code, 0, restore.stdout + restore.stderr);
    const verify = await pgCli(join(folder, 'restored'), target.url, ['--json', 'audit', 'verify']);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    assert.equal((JSON.parse(verify.stdout) as { records: number }).records, records);
    // The restored database holds tables now: a second restore into it is refused.
    const twice = await pgCli(join(folder, 'again'), target.url, ['restore', join(folder, 'bk')]);
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /^error INPUT_INVALID: .* already holds tables/);
  } finally {
    await source.drop();
    await target.drop();
  }
});
