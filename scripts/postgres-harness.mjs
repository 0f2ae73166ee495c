/**
 * @module Starts a throwaway PostgreSQL server from Debian's package for the tests: a temporary
 * data directory, loopback only, a random port, run as a non-root user. Never touches a system
 * cluster. Used by run-tests.mjs and the benchmarks.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

function findPgBin() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], 'bin') : null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function uidOf(name) {
  const out = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  return out.status === 0 ? { uid: Number(out.stdout), gid: Number(gid.stdout) } : null;
}

/**
 * The group whose members sign in with a password (SCRAM): the tests of refused connections and
 * of passwords in a database URL make such roles. Every other role, `toolgate` first, is trusted.
 */
export const PASSWORD_GROUP = 'toolgate_password';

const HBA = [
  'local all all trust',
  `host all +${PASSWORD_GROUP} 127.0.0.1/32 scram-sha-256`,
  'host all all 127.0.0.1/32 trust',
  '',
].join('\n');

/** Returns { url, stop } or throws with what to install. */
export async function startPostgres() {
  const bin = findPgBin();
  if (!bin) {
    throw new Error(
      'PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: apt-get install postgresql',
    );
  }
  const asRoot = userInfo().uid === 0;
  const runAs = asRoot ? (uidOf('postgres') ? 'postgres' : 'nobody') : null;
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-pg-'));
  const data = join(dir, 'data');
  if (runAs) {
    const ids = uidOf(runAs);
    chownSync(dir, ids.uid, ids.gid);
  }
  const run = (cmd, args) => {
    const full = runAs ? ['runuser', ['-u', runAs, '--', cmd, ...args]] : [cmd, args];
    execFileSync(full[0], full[1], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  };
  run(join(bin, 'initdb'), [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'toolgate',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  writeFileSync(join(data, 'pg_hba.conf'), HBA);
  if (runAs) {
    const ids = uidOf(runAs);
    chownSync(join(data, 'pg_hba.conf'), ids.uid, ids.gid);
  }
  // The kernel picks a free port, but it is free only until PostgreSQL binds it: another test
  // run on the host may take it in between. Then the start fails, and another port is tried.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      run(join(bin, 'pg_ctl'), [
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-w',
        '-o',
        `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200`,
        'start',
      ]);
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
  const url = `postgres://toolgate@127.0.0.1:${port}/postgres`;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // The server may already be gone; the directory is removed either way.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run(join(bin, 'psql'), [
      '-h',
      dir,
      '-p',
      String(port),
      '-U',
      'toolgate',
      '-d',
      'postgres',
      '-qc',
      `create role ${PASSWORD_GROUP} nologin`,
    ]);
  } catch (err) {
    stop();
    throw err;
  }
  return { url, stop };
}
