/**
 * `toolgate reports NAME --format json|csv|md [--from --to]` as an operator runs it: the built CLI
 * in a child process on a real database; the report on stdout, refusals by exit class (2 usage, 4 not found).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openGateway } from '../../src/host/toolgate.js';
import { parseCsv } from '../reports/csv.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';

let dir = '';
let db = '';

function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [MAIN, '--db', db, '--data-dir', join(dir, 'data'), ...args],
      { cwd: dir, env: { ...cleanEnv(), ...env }, timeout: 20_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-reports-cli-'));
  db = `sqlite:${join(dir, 'tg.db')}`;
  const applied = await cli([
    'apply',
    '-f',
    join(MAIN, '..', '..', '..', '..', 'demo', 'catalog.yaml'),
  ]);
  assert.equal(applied.code, 0, applied.stderr);
  // The demo's restricted tools start reviewed, as `serve --demo` leaves them.
  const tg = await openGateway({ db });
  try {
    await approvePendingReviews(tg);
  } finally {
    await tg.close();
  }
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

test('reports print JSON, RFC 4180 CSV and Markdown', async () => {
  const json = await cli(['reports', 'capability-register']);
  assert.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { rows: { tool: string }[] };
  assert.equal(report.rows.length, 10);
  const csv = await cli(['reports', 'access-matrix', '--format', 'csv']);
  assert.equal(csv.code, 0, csv.stderr);
  const [header, ...rows] = parseCsv(csv.stdout);
  assert.deepEqual(header, ['agent', 'tool', 'version', 'allowed', 'reason']);
  assert.deepEqual(
    rows.find((r) => r[0] === 'support-bot' && r[1] === 'search_tickets'),
    ['support-bot', 'search_tickets', '1.0.0', 'true', 'granted: tickets:read'],
  );
  const md = await cli([
    'reports',
    'invocations',
    '--format',
    'md',
    '--from',
    '2020-01-01',
    '--to',
    '2020-02-01',
  ]);
  assert.equal(md.code, 0, md.stderr);
  assert.match(md.stdout, /Period: 2020-01-01T00:00:00.000Z to 2020-02-01T00:00:00.000Z/);
  assert.match(md.stdout, /_No rows\._/);
});

test('orphaned tools honour TOOLGATE_TEAMS', async () => {
  const without = JSON.parse((await cli(['reports', 'orphaned-tools'])).stdout) as {
    rows: { tool: string }[];
  };
  assert.ok(without.rows.some((r) => r.tool === 'get_order'));
  const withTeams = JSON.parse(
    (await cli(['reports', 'orphaned-tools'], { TOOLGATE_TEAMS: 'commerce-team, payments-team' }))
      .stdout,
  ) as { rows: { tool: string }[] };
  assert.ok(!withTeams.rows.some((r) => r.tool === 'get_order'));
});

test('an unknown report, format or date is refused: exit 4 (no such report) or 2 (usage)', async () => {
  const unknown = await cli(['--json', 'reports', 'everything']);
  assert.equal(unknown.code, 4);
  assert.equal((JSON.parse(unknown.stdout) as { error: { code: string } }).error.code, 'NOT_FOUND');
  assert.equal((await cli(['reports', 'access-matrix', '--format', 'xlsx'])).code, 2);
  const date = await cli(['--json', 'reports', 'invocations', '--from', 'last tuesday']);
  assert.equal(date.code, 2);
  assert.equal(
    (JSON.parse(date.stdout) as { error: { code: string } }).error.code,
    'INPUT_INVALID',
  );
});
