/**
 * Crash safety of the audit log: a real gateway process on SQLite takes a load of
 * concurrent REST calls and is killed with SIGKILL in the middle of it. After a restart: the log
 * verifies; every call that executed (the handler's own execution log) has its durable pre-record;
 * every call the client got an answer for has its record (nothing acknowledged is lost); and new
 * records chain onto the old tail, covered by the checkpoint written on the clean shutdown.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { AuditLog, DEFAULT_ORIGIN, NoteSigner } from '../../src/records/audit/index.js';
import { openStore } from '../../src/records/store/index.js';
import { cleanEnv, ROOT } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-crash-'));
const dbPath = join(dir, 'toolgate.db');
const dataDir = join(dir, 'data');
const execLog = join(dir, 'executed.log');
const children: ChildProcess[] = [];

after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

interface Gateway {
  readonly child: ChildProcess;
  readonly base: string;
  readonly apiKey: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startGateway(): Promise<Gateway> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'test', 'support', 'audit-gateway.ts'),
      `sqlite:${dbPath}`,
      dataDir,
      execLog,
    ],
    { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let out = '';
  let err = '';
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      // Bounded, with room for a loaded host (the child compiles its TypeScript through tsx).
      () => reject(new Error(`gateway did not start:\n${out}\n${err}`)),
      120_000,
    );
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        const { base, apiKey } = JSON.parse(line) as { base: string; apiKey: string };
        resolve({ child, base, apiKey, exited });
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited ${code}:\n${out}\n${err}`));
    });
  });
}

async function openSession(g: Gateway): Promise<string> {
  const res = await fetch(`${g.base}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.apiKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

/** One call; resolves with the call id the gateway answered with, or null if no answer came. */
async function call(
  g: Gateway,
  session: string,
  tool: string,
  query: string,
): Promise<string | null> {
  try {
    const res = await fetch(`${g.base}/v1/sessions/${session}/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool, arguments: { query } }),
    });
    const body = (await res.json()) as { call_id?: string; details?: { call_id?: string } };
    return body.call_id ?? body.details?.call_id ?? null;
  } catch {
    return null;
  }
}

test('SIGKILL mid-load: the log verifies, executions have pre-records, answers are durable, the chain continues', {
  timeout: 300_000,
}, async () => {
  const first = await startGateway();
  const acknowledged: string[] = [];
  let stop = false;
  let n = 0;
  const worker = async () => {
    while (!stop) {
      const session = await openSession(first).catch(() => null);
      if (!session) return;
      for (let i = 0; i < 25 && !stop; i++) {
        const q = `q-${n++}`;
        // Mostly real executions; every fifth call a denied probe for an unregistered tool.
        const id = await call(first, session, i % 5 === 4 ? 'drop_tables' : 'search_tickets', q);
        if (id) acknowledged.push(id);
      }
    }
  };
  const workers = Array.from({ length: 12 }, worker);
  while (acknowledged.length < 250) await new Promise((r) => setTimeout(r, 5));
  first.child.kill('SIGKILL');
  stop = true;
  await Promise.all(workers);
  const { signal } = await first.exited;
  assert.equal(signal, 'SIGKILL');

  const executed = readFileSync(execLog, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  assert.ok(executed.length > 100, `only ${executed.length} executions before the kill`);

  const db = new Database(dbPath, { readonly: true });
  const tailBefore = db
    .prepare('select seq, hash from audit_log order by seq desc limit 1')
    .get() as { seq: number; hash: string };
  // The log keeps keyed hashes of arguments; the raw ones are in the classified store, written
  // in the pre record's own transaction, keyed by its call.
  const pre = db
    .prepare(
      "select a.args from audit_log l join call_arguments a on a.call_id = l.call_id where l.kind = 'call.pre'",
    )
    .all() as { args: string }[];
  const preQueries = new Set(pre.map((r) => (JSON.parse(r.args) as { query: string }).query));
  const ids = new Set(
    (
      db.prepare('select call_id from audit_log where call_id is not null').all() as {
        call_id: string;
      }[]
    ).map((r) => r.call_id),
  );
  db.close();
  for (const q of executed) assert.ok(preQueries.has(q), `call ${q} executed without a pre-record`);
  for (const id of acknowledged)
    assert.ok(ids.has(id), `acknowledged call ${id} has no audit record`);

  // Restart: the chain continues from the old tail.
  const second = await startGateway();
  const session = await openSession(second);
  const after1 = await call(second, session, 'search_tickets', 'after-restart');
  assert.ok(after1);
  second.child.kill('SIGTERM');
  assert.deepEqual(await second.exited, { code: 0, signal: null });

  const store = await openStore(`sqlite:${dbPath}`);
  try {
    const pem = readFileSync(join(dataDir, 'audit-signing-key.pem'), 'utf8');
    const log = new AuditLog(store, {
      signer: NoteSigner.fromPem(DEFAULT_ORIGIN, pem),
      checkpoints: false,
    });
    const report = await log.verify();
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    assert.equal(report.unsignedRecords, 0, 'the clean shutdown signs the tail');
    const next = await store.db
      .selectFrom('audit_log')
      .select(['seq', 'prev_hash'])
      .where('seq', '=', tailBefore.seq + 1)
      .executeTakeFirstOrThrow();
    assert.equal(
      next.prev_hash,
      tailBefore.hash,
      'the first record after the restart links to the old tail',
    );
    const newCall = await store.db
      .selectFrom('audit_log')
      .select('seq')
      .where('call_id', '=', after1)
      .executeTakeFirstOrThrow();
    assert.ok(Number(newCall.seq) > tailBefore.seq);
  } finally {
    await store.close();
  }
  assert.ok(existsSync(execLog));
});
