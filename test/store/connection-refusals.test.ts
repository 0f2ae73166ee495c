/**
 * PostgreSQL refusing a connection — a wrong password, an unknown role, a database that does not
 * exist, a role over its connection limit — is STORE_UNAVAILABLE naming the cause and its SQLSTATE
 * (the CLI's exit 5, a front's 503), never an internal error, and never with the password. The
 * neighbour: the right password opens the same database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import { openStore } from '../../src/records/store/index.js';
import { type PasswordDatabase, passwordDatabase } from '../support/backends.js';

const pgUrl = process.env.TOOLGATE_TEST_PG_URL;
const requirePg = process.env.TOOLGATE_REQUIRE_PG === '1';
const skip = pgUrl || requirePg ? false : 'no PostgreSQL (TOOLGATE_TEST_PG_URL)';
const password = `Pw${randomBytes(8).toString('hex')}`;
let db: PasswordDatabase | null = null;

before(async () => {
  if (pgUrl) db = await passwordDatabase(pgUrl, password);
});
after(async () => {
  await db?.drop();
});

/** The URL of `db` as `user:password@`, on `database`. */
function urlOf(user: string, pw: string, database: string): string {
  assert.ok(db);
  return `postgres://${user}:${encodeURIComponent(pw)}@${db.server}/${database}`;
}

async function refusedWith(url: string, sqlstate: string, cause: RegExp): Promise<void> {
  await assert.rejects(openStore(url), (err: unknown) => {
    assert.ok(isToolgateError(err), `not a ToolgateError: ${String(err)}`);
    assert.equal(err.code, 'STORE_UNAVAILABLE');
    assert.match(err.message, new RegExp(`\\(SQLSTATE ${sqlstate}\\)$`));
    assert.match(err.message, cause);
    assert.equal(err.message.includes(password), false);
    assert.equal(JSON.stringify(err.toBody()).includes(password), false);
    return true;
  });
}

test('the right password opens; a wrong password, an unknown role, a missing database and a full role are STORE_UNAVAILABLE naming the cause', {
  skip,
}, async () => {
  assert.ok(pgUrl && db, 'TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  const store = await openStore(urlOf(db.user, password, db.database));
  await store.close();

  await refusedWith(urlOf(db.user, `${password}x`, db.database), '28P01', /credentials/);
  await refusedWith(urlOf(`nobody_${db.user}`, password, db.database), '28000', /credentials/);
  await refusedWith(urlOf(db.user, password, `${db.database}_none`), '3D000', /does not exist/);

  const { default: pg } = await import('pg');
  const admin = new pg.Client(pgUrl);
  await admin.connect();
  try {
    await admin.query(`alter role ${db.user} connection limit 0`);
    await refusedWith(urlOf(db.user, password, db.database), '53300', /too many connections/);
  } finally {
    await admin.query(`alter role ${db.user} connection limit -1`);
    await admin.end();
  }
});

test('what stops a connection at its start is STORE_UNAVAILABLE naming the cause, never a bug: TLS the server lacks, a refused options= parameter, a database closed to connections (attack round 22, Y4)', {
  skip,
}, async () => {
  assert.ok(pgUrl && db, 'TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  const base = urlOf(db.user, password, db.database);
  // The test server has no TLS: a URL that asks for it cannot connect.
  for (const mode of ['require', 'verify-full']) {
    await assert.rejects(openStore(`${base}?sslmode=${mode}`), (err: unknown) => {
      assert.ok(isToolgateError(err), `not a ToolgateError: ${String(err)}`);
      assert.equal(err.code, 'STORE_UNAVAILABLE');
      assert.match(err.message, /does not accept TLS/);
      assert.equal(err.message.includes(password), false);
      return true;
    });
  }
  // A server parameter the server refuses at the connection's start.
  await refusedWith(
    `${base}?options=${encodeURIComponent('-c statement_timeout=abc')}`,
    '22023',
    /refused the connection or one of its parameters/,
  );
  // The benign neighbour: a valid parameter connects.
  const ok = await openStore(`${base}?options=${encodeURIComponent('-c statement_timeout=60000')}`);
  await ok.close();

  const { default: pg } = await import('pg');
  const admin = new pg.Client(pgUrl);
  await admin.connect();
  try {
    await admin.query(`alter database ${db.database} allow_connections false`);
    await refusedWith(base, '55000', /does not accept connections now/);
  } finally {
    await admin.query(`alter database ${db.database} allow_connections true`);
    await admin.end();
  }
});

test('a host name that does not resolve, or a certificate not accepted, at the connection: unavailable, in our words', async () => {
  const { connectionError } = await import('../../src/records/store/store-errors.js');
  const dns = connectionError(
    Object.assign(new Error('getaddrinfo ENOTFOUND db.internal'), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
    }),
  );
  assert.ok(isToolgateError(dns));
  assert.equal(dns.code, 'STORE_UNAVAILABLE');
  assert.match(dns.message, /host name does not resolve now/);
  assert.equal(dns.message.includes('db.internal'), false);
  const cert = connectionError(
    Object.assign(new Error('self-signed certificate'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }),
  );
  assert.ok(isToolgateError(cert));
  assert.match(cert.message, /TLS certificate was not accepted/);
  // Only a connection's start is read this way: a query's own error (a constraint) stays itself.
  const { storeError } = await import('../../src/records/store/store-errors.js');
  const query = { code: '23505', message: 'duplicate key' };
  assert.equal(storeError(query), query);
});
