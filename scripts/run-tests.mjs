/**
 * @module Runs every test under test/ with node's test runner, on the compiled copy the type check
 * emits (scripts/test-build.mjs: plain node, no loader). With --checks it first runs the lint, and
 * builds dist/ beside the type check; with --with-postgres it starts a real PostgreSQL server and
 * makes the storage and catalog suites run against it too (TOOLGATE_REQUIRE_PG=1: a missing
 * server fails the run instead of skipping). Each phase's time is printed, and all of them at the
 * end.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startPostgres } from './postgres-harness.mjs';
import { distFromTestBuild, makeTestBuild, removeTestBuild, TEST_BUILD } from './test-build.mjs';

const args = process.argv.slice(2);
const withPostgres = args.includes('--with-postgres');
const withChecks = args.includes('--checks');
const phases = [];
const started = Date.now();

/** Runs one phase, prints and keeps its time. */
async function phase(name, body) {
  const t0 = Date.now();
  const code = await body();
  const seconds = (Date.now() - t0) / 1000;
  phases.push({ name, seconds, code });
  console.log(`# phase ${name}: ${seconds.toFixed(1)} s${code === 0 ? '' : ` (exit ${code})`}`);
  return code;
}

function printPhases() {
  const total = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`# phases: ${phases.map((p) => `${p.name} ${p.seconds.toFixed(1)} s`).join(', ')}`);
  console.log(`# total: ${total} s`);
}

/** Runs `npm run <script>` and resolves to its exit code. */
function npmRun(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: 'inherit' });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

if (withChecks) {
  const code = await phase('lint', () => npmRun('lint'));
  if (code !== 0) {
    printPhases();
    process.exit(code);
  }
}
// The type check emits the compiled copy the tests run on (scripts/test-build.mjs); a checked
// run then assembles dist/ (which the CLI tests run) from the copy's src/ and bundles the CLI, as
// `npm run build` would, without compiling the same sources a second time.
const compiled = await phase(withChecks ? 'typecheck and build' : 'typecheck', async () => {
  const typecheck = await makeTestBuild();
  return typecheck !== 0 || !withChecks ? typecheck : distFromTestBuild();
});
if (compiled !== 0) {
  printPhases();
  process.exit(compiled);
}
const filters = args.filter((a) => !a.startsWith('--'));

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

// Paths inside the compiled copy, which is where the files run; a filter names a source path.
const files = findTests(join(TEST_BUILD, 'test'))
  .map((f) => relative(TEST_BUILD, f))
  .filter((f) => {
    const source = f.replace(/\.js$/, '.ts');
    return filters.length === 0 || filters.some((x) => source.includes(x));
  });
const env = { ...process.env };
// Node's compile cache for every test process and the CLI children they start: the same modules
// compile once per run, not once per file (about a fifth of the suite's CPU). It lives in the
// compiled copy and goes with it; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
env.NODE_COMPILE_CACHE ??= join(process.cwd(), TEST_BUILD, '.compile-cache');
// One migrated SQLite database for the run, which the tests' fresh gateways copy
// (test/support/backends.ts, migratedFresh) instead of migrating their own.
const template = join(process.cwd(), TEST_BUILD, 'sqlite-template.db');
const templated = await phase('sqlite template', () => {
  const make = `import('./test/support/backends.js').then((m) => m.makeSqliteTemplate(${JSON.stringify(template)}))`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', make], {
      cwd: TEST_BUILD,
      stdio: 'inherit',
    });
    child.on('exit', (code) => done(code ?? 1));
  });
});
if (templated !== 0) {
  removeTestBuild();
  printPhases();
  process.exit(templated);
}
env.TOOLGATE_TEST_SQLITE_TEMPLATE = template;
let pg = null;
if (withPostgres) {
  await phase('postgres', async () => {
    pg = await startPostgres();
    return 0;
  });
  env.TOOLGATE_TEST_PG_URL = pg.url;
  env.TOOLGATE_REQUIRE_PG = '1';
  console.log(`# PostgreSQL for tests at ${pg.url}`);
}
const cleanup = () => {
  pg?.stop();
  removeTestBuild();
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});
process.on('SIGTERM', () => {
  cleanup();
  process.exit(143);
});

/**
 * Files whose assertions bound latency or elapsed time (load, capacity, ReDoS timing, replicas
 * behind a balancer): they run alone, after the rest. Everything else runs several files at a
 * time (`concurrency`, below) — the tests are hermetic (kernel ports, their own folders and
 * databases), and one file at a time left one of the two cores idle while a file waited on a child
 * process or a server.
 */
const ALONE = [
  /mcp-load\.test/,
  /mcp-capacity\.test/,
  /redos\.test/,
  /scan-redos\.test/,
  /\/replicas\//,
];
const alone = files.filter((f) => ALONE.some((re) => re.test(f)));

/**
 * The seconds each file took in a recorded run (test/file-times.json, written by --record-times):
 * the first group starts the longest files first, so the run does not end on one long file while
 * the other core idles. A file not recorded counts as DEFAULT_SECONDS; the order only changes
 * when files start, never what runs.
 */
const TIMES_FILE = join('test', 'file-times.json');
const DEFAULT_SECONDS = 5;
let recorded = {};
try {
  recorded = JSON.parse(readFileSync(TIMES_FILE, 'utf8'));
} catch {}
const sourceOf = (f) => f.replace(/\.js$/, '.ts');
const weight = (f) => recorded[sourceOf(f)] ?? DEFAULT_SECONDS;
const together = files
  .filter((f) => !alone.includes(f))
  .sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));

/** Where scripts/file-times-reporter.mjs keeps each group's time per file. */
const timesDir = mkdtempSync(join(tmpdir(), 'toolgate-file-times-'));
let groups = 0;

/** Each file's seconds in this run, by source path (test/…/x.test.ts), for --record-times. */
const measured = {};

/** Prints the slowest files of a group (their top-level tests' durations, hooks included). */
function printSlowest(timesFile) {
  let byFile = {};
  try {
    byFile = JSON.parse(readFileSync(timesFile, 'utf8'));
  } catch {
    return;
  }
  for (const [file, ms] of Object.entries(byFile)) {
    const source = relative(join(process.cwd(), TEST_BUILD), file).replace(/\.js$/, '.ts');
    measured[source] = Math.round(ms / 100) / 10;
  }
  const slowest = Object.entries(byFile)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  console.log('# slowest files:');
  for (const [file, ms] of slowest) {
    const source = relative(join(process.cwd(), TEST_BUILD), file).replace(/\.js$/, '.ts');
    console.log(`#   ${(ms / 1000).toFixed(1).padStart(6)} s  ${source}`);
  }
}

function run(group, concurrency) {
  if (group.length === 0) return Promise.resolve(0);
  groups += 1;
  const timesFile = join(timesDir, `group-${groups}.json`);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      // A file whose tests have all ended exits even if a failed setup left a handle open, and no
      // single test may hang the run: a hang is a failure with a name, not a silent CI timeout.
      [
        '--test',
        '--test-force-exit',
        '--test-timeout=300000',
        `--test-concurrency=${concurrency}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${join(process.cwd(), 'scripts', 'file-times-reporter.mjs')}`,
        '--test-reporter-destination=stdout',
        ...group,
      ],
      { cwd: TEST_BUILD, stdio: 'inherit', env: { ...env, TOOLGATE_FILE_TIMES: timesFile } },
    );
    child.on('exit', (code, signal) => {
      printSlowest(timesFile);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/**
 * Files at a time in the first group (TOOLGATE_TEST_CONCURRENCY, default 4 on two cores). A file
 * that waits on a child process, a browser or a TOTP window leaves its core to the others. On a
 * quiet machine, with three, four or five files at a time, the cores are busy all through the
 * phase: /proc/stat shows no idle time. The phase took 548, 533 and 544 s. What shortens it is
 * less CPU per file, not more files at a time.
 */
const concurrency = Number(process.env.TOOLGATE_TEST_CONCURRENCY ?? 4) || 4;
const first = await phase(`tests (${together.length} files, ${concurrency} at a time)`, () =>
  run(together, concurrency),
);
const second = await phase(`timing tests (${alone.length} files, alone)`, () => run(alone, 1));
cleanup();
rmSync(timesDir, { recursive: true, force: true });
if (args.includes('--record-times')) {
  // Files this run did not reach (a filter) keep their recorded time.
  const merged = { ...recorded, ...measured };
  const sorted = Object.fromEntries(
    Object.entries(merged).sort((a, b) => a[0].localeCompare(b[0])),
  );
  writeFileSync(TIMES_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`# recorded ${Object.keys(measured).length} files' times in ${TIMES_FILE}`);
}
printPhases();
process.exit(first !== 0 ? first : second);
