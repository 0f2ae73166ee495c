/**
 * @module The `toolgate` command as a user runs it (C18): the built dist/edge/cli/main.js in a
 * real child process, a temporary working directory, a real database. Output is asserted both as
 * JSON (--json) and as the text a person reads; exit codes are part of the contract.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify as toYaml } from 'yaml';
import { totpAt } from '../../src/domain/decisions/index.js';
import { commandCodeHash } from '../../src/execution/sandbox/index.js';
import { openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { cleanEnv, ensureBuilt, MAIN, ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { DEMO_TOOL_IDS, validTool } from '../support/tools.js';

const DEMO = join(ROOT, 'demo', 'catalog.yaml');
const DAY_MS = 24 * 60 * 60 * 1000;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to completion; never rejects, the exit code is part of the result. */
function cli(cwd: string, args: readonly string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd, env: cleanEnv(), timeout: 120_000, maxBuffer: 10 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(new Error(`toolgate ${args.join(' ')} did not run: ${err.message}\n${stderr}`));
          return;
        }
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Runs the CLI with --json and parses stdout; fails the test with stderr on a non-zero exit. */
// biome-ignore lint/suspicious/noExplicitAny: the JSON output is asserted field by field
async function cliJson(cwd: string, args: readonly string[]): Promise<any> {
  const run = await cli(cwd, ['--json', ...args]);
  assert.equal(
    run.code,
    0,
    `toolgate ${args.join(' ')} exited ${run.code}: ${run.stderr}${run.stdout}`,
  );
  return JSON.parse(run.stdout);
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'toolgate-cli-'));
}

before(() => {
  ensureBuilt();
});

/** A fresh temp directory and a SQLite URL inside it. */
function workspace(): { dir: string; db: string } {
  const dir = tempDir();
  return { dir, db: `sqlite:${join(dir, 't.db')}` };
}

/** A workspace for the enclosing group: made before its tests (handed to `use`), removed after. */
function groupWorkspace(use: (w: { dir: string; db: string }) => void): void {
  let dir = '';
  before(() => {
    const w = workspace();
    dir = w.dir;
    use(w);
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });
}

// The groups below use their own databases and run concurrently (each CLI run is a whole Node
// start-up); inside a group the tests run in order and build on each other.
describe('toolgate CLI', { concurrency: true }, () => {
  describe('apply -f and reading the catalog', { concurrency: 1 }, () => {
    let dir = '';
    let db = '';
    groupWorkspace((w) => {
      ({ dir, db } = w);
    });

    test('apply -f prints one "+" line per document, and tools list --json has the ten demo tools', async () => {
      const run = await cli(dir, ['--db', db, 'apply', '-f', DEMO]);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split('\n');
      assert.equal(lines.filter((l) => l.startsWith('+ ')).length, 14, run.stdout);
      assert.ok(
        lines.some((l) =>
          l.startsWith(
            '+ tool refund_order@1.0.0: registered (draft, irreversible, privileged), awaiting security review: rev_',
          ),
        ),
        run.stdout,
      );
      assert.equal(lines.at(-1), '14 change(s) applied');

      const listed = await cliJson(dir, ['--db', db, 'tools', 'list']);
      assert.deepEqual(listed.tools.map((t: { id: string }) => t.id).sort(), DEMO_TOOL_IDS);
      for (const t of listed.tools) {
        // Restricted and privileged tools wait for their security review; public ones are live.
        const gated = t.access_tier !== 'public';
        assert.equal(t.lifecycle, gated ? 'draft' : 'active', t.id);
        assert.equal(t.quarantined, false);
        // Without a personal token the CLI acts as the bootstrap operator.
        assert.equal(t.created_by, 'admin-token');
      }
    });

    test('applying the same file again prints only "=" lines and changes nothing', async () => {
      const run = await cli(dir, ['--db', db, 'apply', '-f', DEMO]);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split('\n');
      const marks = lines.slice(0, -1);
      assert.equal(marks.length, 14);
      assert.ok(
        marks.every((l) => l.startsWith('= ') && l.endsWith(': unchanged')),
        run.stdout,
      );
      assert.equal(lines.at(-1), '0 change(s) applied');
    });

    test('the human tools list is a table with a header and one row per version', async () => {
      const run = await cli(dir, ['--db', db, 'tools', 'list']);
      assert.equal(run.code, 0, run.stderr);
      const rows = run.stdout.trim().split('\n');
      assert.match(rows[0] ?? '', /^ID\s+VERSION\s+STATE\s+CLASS\s+TIER\s+OWNER$/);
      assert.equal(rows.length, 11);
      assert.ok(
        rows.some((r) =>
          /^grant_role\s+1\.0\.0\s+draft\s+permission_change\s+privileged\s+security-team$/.test(r),
        ),
      );
    });

    test('tools show ID@VERSION --json (flag after the subcommand) prints the normalized definition', async () => {
      const run = await cli(dir, ['--db', db, 'tools', 'show', 'get_order@1.0.0', '--json']);
      assert.equal(run.code, 0, run.stderr);
      const shown = JSON.parse(run.stdout);
      assert.equal(shown.id, 'get_order');
      assert.equal(shown.version, '1.0.0');
      assert.equal(shown.owner, 'commerce-team');
      assert.deepEqual(shown.definition.input_schema.required, ['order_id']);
      assert.equal(shown.definition.approval.mode, 'none');
      assert.match(shown.definition_hash, /^sha256:[0-9a-f]{64}$/);
    });

    test('tools search order --json ranks get_order first', async () => {
      const found = await cliJson(dir, ['--db', db, 'tools', 'search', 'order']);
      assert.equal(found.results[0]?.id, 'get_order', JSON.stringify(found));
      assert.ok(found.results[0].score > 0);
    });

    test('events list --json shows who did what, in order', async () => {
      const { events } = await cliJson(dir, ['--db', db, 'events', 'list', '--limit', '1000']);
      // 2 agents, 10 tools, 2 grants, 1 change request (the gated grant; the gated tools open
      // theirs after their security review); the second apply added nothing.
      assert.equal(events.length, 15);
      const seqs = events.map((e: { seq: number }) => e.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a: number, b: number) => a - b),
      );
      for (const e of events) {
        assert.equal(e.actor, 'admin-token');
        assert.equal(e.via, 'cli');
      }
      const refund = events.find(
        (e: { subject: string }) => e.subject === 'tool:refund_order@1.0.0',
      );
      assert.equal(refund.action, 'tool.registered');
      assert.equal(refund.details.quarantined, false);
      const grant = events.find(
        (e: { subject: string; action: string }) =>
          e.subject === 'agent:support-bot' && e.action.startsWith('grant'),
      );
      assert.ok(grant, JSON.stringify(events.map((e: { action: string }) => e.action)));
    });

    test('tools reviews --pending lists the drafts waiting for a security review', async () => {
      const { reviews } = await cliJson(dir, ['--db', db, 'tools', 'reviews', '--pending']);
      assert.deepEqual(reviews.map((r: { tool_id: string }) => r.tool_id).sort(), [
        'create_ticket',
        'grant_role',
        'post_webhook',
        'read_file',
        'refund_order',
        'search_tickets',
        'send_email',
      ]);
      const human = await cli(dir, ['--db', db, 'tools', 'reviews', '--pending']);
      assert.match(human.stdout.split('\n')[0] ?? '', /^ID\s+VERSION\s+STATUS\s+TIER/);
    });

    test('tools review: the approver of the token reviews the stated hash; the bootstrap operator, a stated approver and a wrong hash are refused', async () => {
      // carol is set up by an admin account, not by the bootstrap token: what the token registered
      // (the demo, applied as the CLI's bootstrap operator) an account it set up does not review
      // (attack round 11, F3). The token creates that admin and issues its token.
      await cliJson(dir, ['--db', db, 'operators', 'create', 'adam', '--roles', 'admin']);
      const issue = 'operators token issue --for adam --name a --days 1'.split(' ');
      const adam = await cliJson(dir, ['--db', db, ...issue]);
      const adamFile = join(dir, 'adam.token');
      writeFileSync(adamFile, `${adam.token}\n`, { mode: 0o600 });
      const asAdam = ['--db', db, '--token-file', adamFile];
      await cliJson(dir, [...asAdam, 'operators', 'create', 'carol', '--roles', 'approver']);
      const { secret } = await cliJson(dir, [...asAdam, 'approvers', 'enroll', 'carol']);
      const { token } = await cliJson(dir, [
        ...asAdam,
        'operators',
        'token',
        'issue',
        '--for',
        'carol',
        '--name',
        'review',
        '--days',
        '1',
      ]);
      const tokenFile = join(dir, 'carol.token');
      writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
      // carol, set up by adam (the genesis admin, whom the token set up), is a person apart from
      // the token only once dora, a confirmed approver who is not adam, confirms her (attack round
      // 12, N1): adam confirms dora at the genesis, dora confirms carol.
      const adamSecret = (await cliJson(dir, ['--db', db, 'approvers', 'enroll', 'adam'])).secret;
      await cliJson(dir, [...asAdam, 'operators', 'create', 'dora', '--roles', 'approver']);
      const dora = await cliJson(dir, [...asAdam, 'approvers', 'enroll', 'dora']);
      const doraIssue = 'operators token issue --for dora --name d --days 1'.split(' ');
      const doraFile = join(dir, 'dora.token');
      writeFileSync(doraFile, `${(await cliJson(dir, [...asAdam, ...doraIssue])).token}\n`, {
        mode: 0o600,
      });
      const confirm = (who: string[], id: string, secretOf: string) =>
        cliJson(dir, [...who, 'operators', 'confirm', id, '--totp', totpAt(secretOf, new Date())]);
      await confirm(asAdam, 'dora', adamSecret);
      await confirm(['--db', db, '--token-file', doraFile], 'carol', dora.secret);
      const shown = await cliJson(dir, ['--db', db, 'tools', 'show', 'search_tickets@1.0.0']);
      const review = (hash: string, extra: readonly string[] = [], asCarol = true) =>
        cli(dir, [
          '--db',
          db,
          '--json',
          ...(asCarol ? ['--token-file', tokenFile] : []),
          'tools',
          'review',
          'search_tickets',
          '1.0.0',
          '--decision',
          'approved',
          '--hash',
          hash,
          '--notes',
          'read-only, bounded query',
          ...extra,
        ]);
      const bootstrap = await review(shown.definition_hash, [], false);
      assert.equal(bootstrap.code, 3);
      assert.equal(JSON.parse(bootstrap.stdout).error.code, 'FORBIDDEN');
      assert.match(JSON.parse(bootstrap.stdout).error.message, /bootstrap admin token cannot/);
      const stated = await review(shown.definition_hash, ['--approver', 'carol']);
      assert.equal(stated.code, 2);
      assert.equal(JSON.parse(stated.stdout).error.code, 'INPUT_INVALID');
      const wrongHash = await review(`sha256:${'0'.repeat(64)}`);
      assert.equal(wrongHash.code, 3);
      assert.equal(JSON.parse(wrongHash.stdout).error.code, 'REVIEW_HASH_MISMATCH');
      // Approving a restricted tool needs the reviewer's own second factor.
      const bare = await review(shown.definition_hash);
      assert.equal(bare.code, 2);
      assert.equal(JSON.parse(bare.stdout).error.code, 'INPUT_INVALID');
      assert.match(JSON.parse(bare.stdout).error.message, /second factor/);
      assert.equal(
        (await cliJson(dir, ['--db', db, 'tools', 'show', 'search_tickets@1.0.0'])).lifecycle,
        'draft',
      );
      const ok = await review(shown.definition_hash, ['--totp', totpAt(secret, new Date())]);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      const done = JSON.parse(ok.stdout);
      assert.equal(done.review.reviewer, 'operator:carol');
      assert.equal(done.review.definition_hash, shown.definition_hash);
      assert.equal(done.tool.lifecycle, 'active');
    });
  });

  describe('lifecycle and quarantine', { concurrency: 1 }, () => {
    let dir = '';
    let db = '';
    groupWorkspace((w) => {
      ({ dir, db } = w);
    });
    before(async () => {
      // Set-up only: the library applies the demo in-process, sparing one CLI start-up.
      const tg = await openGateway({ db });
      try {
        await tg.config.applyText(readFileSync(DEMO, 'utf8'), { id: 'admin-token', via: 'cli' });
        await approvePendingReviews(tg);
      } finally {
        await tg.close();
      }
    });

    test('tools deprecate --window 7 sets the retirement date and search flags the tool deprecated', async () => {
      const dep = await cliJson(dir, [
        '--db',
        db,
        'tools',
        'deprecate',
        'get_order@1.0.0',
        '--window',
        '7',
      ]);
      assert.equal(dep.lifecycle, 'deprecated');
      assert.equal(Date.parse(dep.retire_at) - Date.parse(dep.deprecated_at), 7 * DAY_MS);
      const found = await cliJson(dir, ['--db', db, 'tools', 'search', 'order']);
      const hit = found.results.find((r: { id: string }) => r.id === 'get_order');
      assert.ok(hit, JSON.stringify(found));
      assert.equal(hit.deprecated, true);
      assert.equal(hit.retire_at, dep.retire_at);
    });

    test('tools retire ends it: search no longer finds it', async () => {
      const run = await cli(dir, [
        '--db',
        db,
        'tools',
        'retire',
        'get_order@1.0.0',
        '--reason',
        'replaced',
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout.trim(), 'get_order@1.0.0 is retired');
      const found = await cliJson(dir, ['--db', db, 'tools', 'search', 'order']);
      assert.ok(!found.results.some((r: { id: string }) => r.id === 'get_order'));
    });

    test('tools release without --reason exits non-zero before touching anything', async () => {
      const run = await cli(dir, ['--db', db, 'tools', 'release', 'send_email@1.0.0']);
      assert.notEqual(run.code, 0, 'release without --reason exited 0');
      assert.match(run.stderr, /--reason/);
    });

    test('tools quarantine --reason hides a tool from search; release --reason brings it back', async () => {
      const q = await cliJson(dir, [
        '--db',
        db,
        'tools',
        'quarantine',
        'send_email@1.0.0',
        '--reason',
        'review',
      ]);
      assert.equal(q.quarantined, true);
      const hidden = await cliJson(dir, ['--db', db, 'tools', 'search', '--tags', 'email']);
      assert.deepEqual(hidden.results, []);
      const r = await cli(dir, [
        '--db',
        db,
        'tools',
        'release',
        'send_email@1.0.0',
        '--reason',
        'ok',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'send_email@1.0.0 is released from quarantine');
      const back = await cliJson(dir, ['--db', db, 'tools', 'search', '--tags', 'email']);
      assert.deepEqual(
        back.results.map((x: { id: string }) => x.id),
        ['send_email'],
      );
    });

    test('the event record holds each change with its reason', async () => {
      const { events } = await cliJson(dir, ['--db', db, 'events', 'list', '--limit', '1000']);
      const of = (subject: string) =>
        events
          .filter((e: { subject: string }) => e.subject === subject)
          .map((e: { action: string; details: { reason?: string } }) => [
            e.action,
            e.details.reason ?? null,
          ]);
      assert.deepEqual(of('tool:get_order@1.0.0'), [
        ['tool.registered', null],
        ['tool.deprecated', null],
        ['tool.retired', 'replaced'],
      ]);
      assert.deepEqual(of('tool:send_email@1.0.0'), [
        ['tool.registered', null],
        ['tool.reviewed', null],
        ['tool.activated', null],
        ['tool.quarantined', 'review'],
        ['tool.released', 'ok'],
      ]);
    });
  });

  describe('refusals', { concurrency: 1 }, () => {
    let dir = '';
    let db = '';
    groupWorkspace((w) => {
      ({ dir, db } = w);
    });

    test('a file that is not YAML exits 2 (usage) with INPUT_MALFORMED naming the line', async () => {
      const file = join(dir, 'malformed.yaml');
      writeFileSync(file, 'kind: Tool\nspec: {id: x\n');
      const run = await cli(dir, ['--db', db, '--json', 'apply', '-f', file]);
      assert.equal(run.code, 2);
      const { error } = JSON.parse(run.stdout);
      assert.equal(error.code, 'INPUT_MALFORMED');
      assert.match(error.message, /line \d+/);
    });

    test('an invalid configuration exits 2 (usage): {error:{code:"CONFIG_INVALID"}} under --json, readable problem lines without', async () => {
      const file = join(dir, 'invalid.yaml');
      writeFileSync(
        file,
        toYaml({
          apiVersion: 'toolgate/v1',
          kind: 'Agent',
          spec: { id: 'Not A Valid Id', owner: 'qa-team', colour: 'blue' },
        }),
      );
      const json = await cli(dir, ['--db', db, '--json', 'apply', '-f', file]);
      assert.equal(json.code, 2);
      const parsed = JSON.parse(json.stdout);
      assert.deepEqual(Object.keys(parsed), ['error']);
      assert.deepEqual(Object.keys(parsed.error).sort(), ['code', 'details', 'message']);
      assert.equal(parsed.error.code, 'CONFIG_INVALID');
      const pointers = parsed.error.details.problems.map((p: { pointer: string }) => p.pointer);
      assert.ok(pointers.includes('/0/spec/id'), JSON.stringify(pointers));
      assert.ok(pointers.includes('/0/spec/colour'), JSON.stringify(pointers));
      for (const p of parsed.error.details.problems) assert.equal(p.document, 0);

      const human = await cli(dir, ['--db', db, 'apply', '-f', file]);
      assert.equal(human.code, 2);
      assert.equal(human.stdout, '');
      assert.match(human.stderr, /^error CONFIG_INVALID: configuration refused, nothing applied/);
      assert.match(human.stderr, /^ {2}\/0\/spec\/id: /m);
      assert.match(human.stderr, /^ {2}\/0\/spec\/colour: is not an allowed property$/m);
      assert.doesNotMatch(human.stderr, /at .*\.js:\d+/, 'no stack trace for a refusal');
    });

    test('a broken tool among valid documents refuses the file and writes nothing', async () => {
      const broken = validTool({ id: 'cli_broken', name: 'cli_broken', version: 'one' });
      delete broken.owner;
      const file = join(dir, 'mixed.yaml');
      writeFileSync(
        file,
        [
          { apiVersion: 'toolgate/v1', kind: 'Agent', spec: { id: 'mixed-bot', owner: 'qa-team' } },
          {
            apiVersion: 'toolgate/v1',
            kind: 'Tool',
            spec: validTool({ id: 'cli_good', name: 'cli_good' }),
          },
          { apiVersion: 'toolgate/v1', kind: 'Tool', spec: broken },
        ]
          .map((d) => toYaml(d))
          .join('---\n'),
      );
      const run = await cli(dir, ['--db', db, '--json', 'apply', '-f', file]);
      assert.equal(run.code, 2);
      const { error } = JSON.parse(run.stdout);
      assert.equal(error.code, 'CONFIG_INVALID');
      assert.ok(error.details.problems.length > 0);
      assert.ok(error.details.problems.every((p: { document: number }) => p.document === 2));
      // Every change writes an event in its own transaction; none means nothing was written.
      const { events } = await cliJson(dir, ['--db', db, 'events', 'list']);
      assert.deepEqual(events, []);
    });

    test('tools show of an unknown tool exits 4 (not found) with TOOL_NOT_FOUND', async () => {
      const run = await cli(dir, ['--db', db, '--json', 'tools', 'show', 'no_such_tool@1.0.0']);
      assert.equal(run.code, 4);
      assert.deepEqual(JSON.parse(run.stdout), {
        error: {
          code: 'TOOL_NOT_FOUND',
          message: 'no tool no_such_tool@1.0.0',
          details: { toolId: 'no_such_tool', version: '1.0.0' },
        },
      });
    });

    test('a reference without @VERSION is refused for commands that change one version', async () => {
      const run = await cli(dir, ['--db', db, 'tools', 'retire', 'get_order']);
      assert.equal(run.code, 2);
      assert.equal(run.stdout, '');
      assert.match(run.stderr, /^error INPUT_INVALID: expected TOOL_ID@VERSION, got "get_order"/);
    });
  });

  describe('dry run and stdin', { concurrency: 1 }, () => {
    let dir = '';
    let db = '';
    groupWorkspace((w) => {
      ({ dir, db } = w);
    });

    test('apply --dry-run prints the plan and writes nothing', async () => {
      const run = await cli(dir, ['--db', db, 'apply', '-f', DEMO, '--dry-run']);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split('\n');
      assert.equal(lines.filter((l) => l.startsWith('+ ')).length, 14);
      assert.equal(lines.at(-1), 'dry run: 14 change(s) would be applied, nothing written');
      assert.deepEqual((await cliJson(dir, ['--db', db, 'events', 'list'])).events, []);
    });

    test('apply -f - reads the file from stdin', async () => {
      const text = toYaml({ apiVersion: 'toolgate/v1', kind: 'Tool', spec: validTool() });
      const run = await cli(dir, ['--db', db, '--json', 'apply', '-f', '-'], text);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(
        JSON.parse(run.stdout).changes.map((c: { subject: string; action: string }) => [
          c.subject,
          c.action,
        ]),
        [['tool lookup_invoice@1.0.0', 'create']],
      );
    });
  });

  describe('on postgres', { concurrency: 1 }, () => {
    const pg = backends().find((b) => b.name === 'postgres');
    test('apply, search and events work the same against PostgreSQL', {
      skip: pg ? false : 'TOOLGATE_TEST_PG_URL is not set',
    }, async () => {
      if (!pg) return;
      const dir = tempDir();
      const { url, drop } = await pg.fresh();
      try {
        const applied = await cliJson(dir, ['--db', url, 'apply', '-f', DEMO]);
        assert.equal(applied.changes.length, 14);
        assert.ok(applied.changes.every((c: { action: string }) => c.action === 'create'));
        assert.deepEqual(
          applied.changes
            .filter((c: { kind: string }) => c.kind === 'Tool')
            .map((c: { subject: string }) => c.subject.replace(/^tool (.*)@1\.0\.0$/, '$1'))
            .sort(),
          DEMO_TOOL_IDS,
        );
        const again = await cliJson(dir, ['--db', url, 'apply', '-f', DEMO]);
        assert.ok(again.changes.every((c: { action: string }) => c.action === 'unchanged'));
        const found = await cliJson(dir, ['--db', url, 'tools', 'search', 'order']);
        assert.equal(found.results[0]?.id, 'get_order');
        const { events } = await cliJson(dir, ['--db', url, 'events', 'list', '--limit', '1000']);
        // 2 agents, 10 tools, 2 grants and the one grant change; the four-eyes changes of the
        // irreversible tools open only once their security reviews are recorded.
        assert.equal(events.length, 15);
        // bigserial comes back as a number, as from SQLite.
        assert.deepEqual(
          events.map((e: { seq: number }) => e.seq),
          [...Array(15).keys()].map((i) => i + 1),
        );
        assert.ok(events.every((e: { via: string }) => e.via === 'cli'));
        // Everything went to PostgreSQL: ./data holds only the bootstrap admin token the CLI
        // created on first use to act as the bootstrap operator, no database file.
        assert.deepEqual(readdirSync(join(dir, 'data')), ['admin-token']);
      } finally {
        await drop();
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      }
    });
  });

  describe('serve', { concurrency: 1 }, () => {
    let dir: string;
    let children: ChildProcess[] = [];
    before(() => {
      dir = tempDir();
    });
    after(() => {
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      children = [];
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    interface Started {
      readonly child: ChildProcess;
      readonly base: string;
      /** The token when the banner printed it (only the start that created it does). */
      readonly token: string | null;
      readonly banner: string;
      readonly output: () => string;
      readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
    }

    /** Starts `serve`, waits for the banner with the address and the admin token line. */
    function startServe(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Started> {
      const child = spawn(process.execPath, [MAIN, ...args], {
        cwd: dir,
        env: { ...cleanEnv(), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let stdout = '';
      let stderr = '';
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
        (resolve) => child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          // Bounded, but with room for a host loaded by other test runs (a start took 15 s).
          () => reject(new Error(`serve printed no banner in 120 s:\n${stdout}\n${stderr}`)),
          120_000,
        );
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.stdout?.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const address = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout)?.[1];
          const line = /admin token: (.*)\n/.exec(stdout)?.[1];
          if (address && line !== undefined && /try: .*\n/.test(stdout)) {
            const token = /^tga_\S+$/.test(line) ? line : null;
            clearTimeout(timer);
            resolve({ child, base: address, token, banner: stdout, output: () => stdout, exited });
          }
        });
        void exited.then(({ code }) => {
          clearTimeout(timer);
          reject(new Error(`serve exited ${code} before its banner:\n${stdout}\n${stderr}`));
        });
      });
    }

    test('serve --demo --port 0 prints its real address and where the new admin token is, serves the demo catalog, and exits cleanly on SIGTERM', async () => {
      const tokenFile = join(dir, 'secrets', 'admin-token');
      const db = `sqlite:${join(dir, 'serve.db')}`;
      const args = [
        '--db',
        db,
        '--data-dir',
        join(dir, 'keys'),
        'serve',
        '--demo',
        '--port',
        '0',
        '--admin-token-file',
        tokenFile,
      ];
      const s = await startServe(args);
      assert.doesNotMatch(s.base, /:0$/);
      assert.match(s.banner, /demo catalog: 14 documents, 14 new/);
      // stdout is a pipe here, as in a container or under systemd: the new token is not printed.
      assert.match(s.banner, new RegExp(`admin token: created now in ${tokenFile}\n`));
      assert.match(s.banner, /not printed: stdout is not a terminal/);
      assert.equal(s.token, null);
      const token = readFileSync(tokenFile, 'utf8').trim();
      assert.match(token, /^tga_[A-Za-z0-9_-]{40,}$/);
      assert.ok(!s.banner.includes(token), 'the token is nowhere in the log');
      assert.equal(statSync(tokenFile).mode & 0o077, 0, 'the token file is private to its owner');

      const ready = await fetch(`${s.base}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready', store: 'sqlite' });
      assert.equal((await fetch(`${s.base}/v1/tools`)).status, 401);
      const tools = await fetch(`${s.base}/v1/tools`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(tools.status, 200);
      const body = (await tools.json()) as { tools: { id: string; created_by: string }[] };
      assert.deepEqual(body.tools.map((t) => t.id).sort(), DEMO_TOOL_IDS);
      assert.ok(body.tools.every((t) => t.created_by === 'system:demo'));

      s.child.kill('SIGTERM');
      const { code, signal } = await s.exited;
      assert.equal(signal, null);
      assert.equal(code, 0);
      assert.match(s.output(), /SIGTERM, shutting down/);
      // The database, the token and the keys were placed where we said; no ./data was created.
      assert.ok(!existsSync(join(dir, 'data')));

      // A restart keeps the token and the demo catalog is already there. stdout is a log under
      // systemd or in a container: the token it did not create is named by where it is, never shown.
      const again = await startServe(args);
      assert.equal(again.token, null);
      assert.ok(!again.banner.includes(token), 'a kept token is never printed');
      assert.match(again.banner, new RegExp(`admin token: in ${tokenFile} \\(not printed\\)`));
      const kept = await fetch(`${again.base}/v1/tools`, {
        headers: { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` },
      });
      assert.equal(kept.status, 200, 'the token in the file still works');
      assert.match(again.banner, /demo catalog: 14 documents, 0 new/);
      assert.doesNotMatch(again.banner, /created now/);
      // A request first: serve installs its signal handlers only after printing the banner, so a
      // signal sent the instant the banner appears can still kill it uncleanly (reported bug).
      assert.equal((await fetch(`${again.base}/readyz`)).status, 200);
      again.child.kill('SIGINT');
      assert.deepEqual(await again.exited, { code: 0, signal: null });
    });

    test('on a terminal the start that creates the admin token prints it once (attack round 21, X7)', async () => {
      // util-linux `script` gives serve a pseudo-terminal as stdout, as a person's shell does.
      const tokenFile = join(dir, 'tty-secrets', 'admin-token');
      const command = [process.execPath, MAIN, '--db', `sqlite:${join(dir, 'tty.db')}`]
        .concat(['--data-dir', join(dir, 'tty-keys'), 'serve', '--port', '0'])
        .concat(['--admin-token-file', tokenFile])
        .map((word) => `'${word}'`)
        .join(' ');
      const child = spawn('script', ['-qefc', command, '/dev/null'], {
        cwd: dir,
        env: { ...cleanEnv(), TERM: 'dumb' },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      children.push(child);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      let out = '';
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no banner in 120 s:\n${out}`)), 120_000);
          child.stdout?.on('data', (chunk: Buffer) => {
            out += chunk.toString().replaceAll('\r', '');
            if (/try: .*\n/.test(out)) {
              clearTimeout(timer);
              resolve();
            }
          });
          void exited.then(() => reject(new Error(`script exited before the banner:\n${out}`)));
        });
        const token = readFileSync(tokenFile, 'utf8').trim();
        assert.match(out, new RegExp(`admin token: ${token}\n`));
        assert.match(out, /created now and kept in .*; printed this once only/);
      } finally {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
        await exited;
      }
    });

    test('serve with TOOLGATE_ADMIN_TOKEN never prints the token, and it is the one that works', async () => {
      const token = 'tga_from-the-environment-0123456789abcdefghij';
      const s = await startServe(
        [
          '--db',
          `sqlite:${join(dir, 'env.db')}`,
          '--data-dir',
          join(dir, 'env-keys'),
          'serve',
          '--port',
          '0',
          '--admin-token-file',
          join(dir, 'env-secrets', 'admin-token'),
        ],
        { TOOLGATE_ADMIN_TOKEN: token },
      );
      assert.equal(s.token, null);
      assert.ok(!s.banner.includes(token), 'the token from the environment is not printed');
      assert.match(s.banner, /admin token: from TOOLGATE_ADMIN_TOKEN \(not printed\)/);
      const tools = await fetch(`${s.base}/v1/tools`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(tools.status, 200);
      assert.ok(!existsSync(join(dir, 'env-secrets', 'admin-token')), 'no token file was made');
      s.child.kill('SIGTERM');
      assert.deepEqual(await s.exited, { code: 0, signal: null });
    });

    test('serve refuses a port out of range with exit code 2 (usage) and a readable error', async () => {
      const run = await cli(dir, [
        '--db',
        `sqlite:${join(dir, 'bad.db')}`,
        'serve',
        '--port',
        '70000',
      ]);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /--port/);
      assert.match(run.stderr, /65535/);
      assert.doesNotMatch(run.stderr, /at .*\.js:\d+/, 'no stack trace');
    });
  });
});

test('tools hash prints the code_hash the gate checks, covering the files the argv names by path', async () => {
  ensureBuilt();
  const dir = tempDir();
  try {
    const script = join(dir, 'tool.mjs');
    writeFileSync(script, 'process.stdout.write("{}")\n');
    const out = await cliJson(dir, ['tools', 'hash', '--', 'node', script, '--flag']);
    assert.equal(out.code_hash, commandCodeHash(['node', script, '--flag']));
    assert.deepEqual(out.files, [script]);
    writeFileSync(script, 'process.stdout.write("{ }")\n');
    const changed = await cliJson(dir, ['tools', 'hash', '--', 'node', script, '--flag']);
    assert.notEqual(changed.code_hash, out.code_hash);
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});
