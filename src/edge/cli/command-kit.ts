/**
 * @module What every command group of the `toolgate` command shares: the global options, opening
 * a gateway for one command and handing it the admin API, page options, parsers of arguments and
 * the lines a tool version prints as.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AdminApi, Operator, OperatorAction } from '../../api/index.js';
import {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  MAX_SECRET_FILE_BYTES,
  narrowPrivateDir,
  problem,
  readBoundedFile,
  ToolgateError,
} from '../../core/index.js';
import type { ToolVersionDetail, ToolVersionSummary } from '../../domain/catalog/index.js';
import { loadMasterKey } from '../../domain/credentials/index.js';
import { checkAdminTokenStrength, loadOrCreateAdminToken } from '../../domain/identity/index.js';
import { openToolgate, type Toolgate, type ToolgateOptions } from '../../host/toolgate.js';
import { DEFAULT_ORIGIN } from '../../records/audit/index.js';
import { makeOutput, type Output, reportError } from './output.js';
import {
  approvalSigner,
  auditSigner,
  jwtConfigFromEnv,
  outboundFromEnv,
  teamsFromEnv,
} from './runtime-files.js';

export const VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

export interface GlobalOptions {
  db?: string;
  json?: boolean;
  dataDir: string;
  /** A file holding a personal operator token (instead of TOOLGATE_TOKEN). */
  tokenFile?: string;
}

/**
 * The database URL this run opens: --db (or TOOLGATE_DB), else the SQLite file in the data folder
 * (`--data-dir`), so that a gateway started elsewhere creates nothing in its working folder.
 */
export function dbUrl(globals: Pick<GlobalOptions, 'db' | 'dataDir'>): string {
  return globals.db ?? `sqlite:${join(globals.dataDir, 'toolgate.db')}`;
}

/** The command each program is running (`secrets list`), noted before its action runs. */
const RUNNING = new WeakMap<Command, string>();

/** Notes the command about to run (program.ts's `preAction` hook): its words, never its arguments. */
export function noteRunning(root: Command, running: Command): void {
  const words: string[] = [];
  for (let c: Command | null = running; c !== null && c !== root; c = c.parent) {
    words.unshift(c.name());
  }
  RUNNING.set(root, words.join(' '));
}

/** Who is asking, for the operator authority: the CLI and the command, for its audit record. */
export function cliAsking(program: Command): { via: 'cli'; command?: string } {
  const command = RUNNING.get(program);
  return command === undefined ? { via: 'cli' } : { via: 'cli', command };
}

/** TOOLGATE_ADMIN_TOKEN=disabled switches the bootstrap admin token off (serve and the CLI). */
export const ADMIN_TOKEN_DISABLED = 'disabled';

export function adminTokenDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TOOLGATE_ADMIN_TOKEN === ADMIN_TOKEN_DISABLED;
}

function unauthenticated(message: string): ToolgateError<'UNAUTHENTICATED'> {
  return new ToolgateError('UNAUTHENTICATED', message, {});
}

/**
 * Who this CLI run acts as. With a personal token (TOOLGATE_TOKEN or --token-file) the operator
 * it belongs to, checked against the database this run opened (expired, revoked or disabled:
 * refused). Without one, the bootstrap operator — if the admin token is enabled and this user
 * can read it (TOOLGATE_ADMIN_TOKEN, or the data folder's `admin-token`, created on first use as
 * `serve` does). Never a name the command line states.
 */
async function cliOperator(admin: AdminApi, globals: GlobalOptions): Promise<Operator> {
  let token = process.env.TOOLGATE_TOKEN?.trim();
  if (globals.tokenFile) {
    // Missing or unreadable: no credential. Not a regular file, or too large: INPUT_INVALID.
    token = readBoundedFile(globals.tokenFile, {
      option: '--token-file',
      maxBytes: MAX_SECRET_FILE_BYTES,
      unreadable: unauthenticated,
    }).trim();
  }
  if (token !== undefined && token !== '') {
    const op = await admin.operators.authority.byToken(token);
    if (!op) {
      throw unauthenticated(
        `${globals.tokenFile ? `the token in ${globals.tokenFile}` : 'TOOLGATE_TOKEN'} is not a valid personal operator token (malformed, expired, revoked, or its account disabled)`,
      );
    }
    return op;
  }
  if (adminTokenDisabled()) {
    throw unauthenticated(
      'the bootstrap admin token is disabled (TOOLGATE_ADMIN_TOKEN=disabled); set TOOLGATE_TOKEN to a personal operator token (tgo_…) or pass --token-file',
    );
  }
  try {
    const fromEnv = process.env.TOOLGATE_ADMIN_TOKEN;
    if (fromEnv !== undefined) checkAdminTokenStrength(fromEnv);
    else loadOrCreateAdminToken(join(globals.dataDir, 'admin-token'));
  } catch (err) {
    throw unauthenticated(
      `no personal token, and the bootstrap admin token is not usable: ${err instanceof Error ? err.message : String(err)}; set TOOLGATE_TOKEN to a personal operator token (tgo_…)`,
    );
  }
  return admin.operators.authority.bootstrap();
}

/** A comma-separated option value as its trimmed, non-empty parts. */
export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** Parses an integer option within bounds; anything else is a usage error, never NaN. */
export function int(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    }
    return n;
  };
}

/**
 * `--approval-wait <seconds>` of `serve` and `mcp`: how long the MCP front holds a call that waits
 * for approval open for its decision (docs/mcp.md, "Stock clients wait for the person").
 */
export function approvalWaitOption(): Option {
  return new Option(
    '--approval-wait <seconds>',
    "how long an MCP call that waits for approval is held open for its decision before it is answered still pending (0: at once); keep it below your clients' request timeout (60 s for the TypeScript SDKs)",
  )
    .env('TOOLGATE_APPROVAL_WAIT')
    .default(45)
    .argParser(int(0, 600));
}

/** A fraction above 0 and at most 1 (a share of a cap). */
export function share(value: string): number {
  const n = Number(value);
  if (!/^\d*\.?\d+$/.test(value.trim()) || !(n > 0 && n <= 1)) {
    throw new InvalidArgumentError('must be a number above 0, at most 1');
  }
  return n;
}

/**
 * Refuses `--approver`: kept, hidden, only so that a script written for the stated-approver CLI
 * is told why instead of "unknown option".
 */
export function refuseStatedApprover(opts: { approver?: string }): void {
  if (opts.approver !== undefined) {
    throw new ToolgateError(
      'INPUT_INVALID',
      'the approver is the operator this command authenticated as; drop --approver',
      { problems: [problem('/approver', 'approver is not accepted', 'approval.approver')] },
    );
  }
}

/** `--cursor` and `--limit` of every list command (the same walk as the REST lists). */
export function pageOptions(command: Command): Command {
  return command
    .option('--cursor <cursor>', 'the cursor the previous page printed')
    .addOption(
      new Option('--limit <n>', 'entries per page')
        .default(DEFAULT_PAGE_LIMIT)
        .argParser(int(1, MAX_PAGE_LIMIT)),
    );
}

export interface PageFlags {
  cursor?: string;
  limit: number;
}

/** The gateway options every command opens with: keys and secrets from the data folder. */
/**
 * TOOLGATE_CLASSIFIED_RETENTION_DAYS: days the classified store keeps raw arguments (serve and
 * the CLI read the same variable, so `audit classified sweep` removes what serve would).
 */
export function classifiedRetentionFromEnv(env: NodeJS.ProcessEnv = process.env): {
  classifiedRetentionDays?: number;
} {
  const text = env.TOOLGATE_CLASSIFIED_RETENTION_DAYS?.trim();
  if (text === undefined || text === '') return {};
  const days = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(days) || days < 1 || days > 36_500) {
    throw new ToolgateError(
      'INPUT_INVALID',
      'TOOLGATE_CLASSIFIED_RETENTION_DAYS must be a whole number of days from 1 to 36500',
      {
        problems: [
          problem(
            '/TOOLGATE_CLASSIFIED_RETENTION_DAYS',
            'must be a whole number of days from 1 to 36500',
            'retention',
          ),
        ],
      },
    );
  }
  return { classifiedRetentionDays: days };
}

function gatewayOptions(globals: GlobalOptions): ToolgateOptions {
  // The data folder is the gateway's own, 0700, whenever a command uses it.
  narrowPrivateDir(globals.dataDir);
  return {
    db: dbUrl(globals),
    approvalSigner: () => approvalSigner(globals.dataDir),
    masterKey: () => loadMasterKey({ dataDir: globals.dataDir }),
    protectedPaths: protectedPaths(globals.dataDir),
  };
}

/**
 * Opens toolgate, authenticates the operator of this run, runs `fn` with the admin API and that
 * operator (record actions as `operatorActor(operator, 'cli')`), closes; a refusal becomes exit
 * code 1 with a structured error. Commands get the admin API only: no command runs a tool.
 * `extra.action`: the command's action in the operator authority's table (default `administer`);
 * the authority decides on the account this run's credential read (a disabled account, a revoked
 * token or a removed role refuses the next command).
 */
export function withAdmin(
  program: Command,
  fn: (admin: AdminApi, out: Output, operator: Operator) => Promise<void>,
  extra: Pick<ToolgateOptions, 'audit'> & { action?: OperatorAction } = {},
  /** Answers an error itself (true) instead of the usual refusal; e.g. a damaged database. */
  handled: (err: unknown, out: Output) => boolean = () => false,
): () => Promise<void> {
  return async () => {
    const globals = program.opts<GlobalOptions>();
    const out = makeOutput(globals.json === true);
    let tg: Toolgate | null = null;
    const { action = 'administer', ...options } = extra;
    try {
      tg = await openToolgate({
        ...gatewayOptions(globals),
        auditSigner: () => auditSigner(globals.dataDir, DEFAULT_ORIGIN),
        ...options,
        // The running gateway checkpoints what the CLI appends (within its interval); only the
        // audit commands that need a signed head write one here.
        audit: { checkpoints: false, ...classifiedRetentionFromEnv(), ...options.audit },
        teams: teamsFromEnv(),
        outbound: outboundFromEnv(),
        // One-shot commands watch nothing: the detectors and the health monitor run in `serve`.
        detectors: false,
        health: false,
      });
      const operator = await cliOperator(tg.admin, globals);
      // Without a token the CLI is the bootstrap admin; where a person must act, the refusal says
      // how to be one.
      await tg.admin.operators.authority.enforce(operator, action, cliAsking(program));
      await fn(tg.admin, out, operator);
    } catch (err) {
      if (!handled(err, out)) process.exitCode = reportError(err, out.json);
    } finally {
      await tg?.close();
    }
  };
}

/** Opens toolgate for `toolgate mcp`: the agent API for the stdio front, JWTs when configured. */
export function openForAgent(globals: GlobalOptions): Promise<Toolgate> {
  const jwt = jwtConfigFromEnv();
  return openToolgate({
    ...gatewayOptions(globals),
    // The checkpoints this process writes are signed with the data folder's audit key, the one
    // `audit verify` trusts (as serve's are): a throwaway key would leave them unverifiable.
    auditSigner: () => auditSigner(globals.dataDir, DEFAULT_ORIGIN),
    ...(jwt ? { jwt } : {}),
  });
}

/** The gateway's own files, which no sandbox may see (the database's are added by openToolgate). */
function protectedPaths(dataDir: string): string[] {
  const keyFile = process.env.TOOLGATE_MASTER_KEY_FILE;
  return [dataDir, ...(keyFile ? [keyFile] : [])];
}

/** `id@version`; a bare id is refused for commands that change one version. */
export function parseRef(ref: string): { id: string; version: string } {
  const at = ref.lastIndexOf('@');
  if (at <= 0 || at === ref.length - 1)
    throw new TypeError(`expected TOOL_ID@VERSION, got "${ref}"`);
  return { id: ref.slice(0, at), version: ref.slice(at + 1) };
}

/**
 * The text of the file `option` names, or stdin for `-`: a regular file only, at most `maxBytes`
 * (default 1 MiB; configuration documents pass the 10 MiB that apply accepts over REST too).
 */
export function readInput(
  file: string,
  option: string,
  maxBytes: number = MAX_SECRET_FILE_BYTES,
): string {
  return readBoundedFile(file, { option, maxBytes, stdin: true });
}

export function versionLine(t: ToolVersionSummary): string[] {
  const state = t.quarantined ? `${t.lifecycle},QUARANTINED` : t.lifecycle;
  return [t.id, t.version, state, t.action_class, t.access_tier, t.owner];
}

/** Screen columns assumed when no terminal is known (a file read later, a pager without COLUMNS). */
const PLAIN_COLUMNS = 80;

/**
 * The columns a reader's terminal has: stdout's when it is one; else stderr's (`tools show | less`
 * or `| grep` still runs in that terminal, round 20 W12); else `COLUMNS`; else PLAIN_COLUMNS.
 */
export function screenColumnsOf(
  out: { readonly isTTY?: boolean; readonly columns?: number },
  err: { readonly isTTY?: boolean; readonly columns?: number },
  env: NodeJS.ProcessEnv,
): number {
  for (const stream of [out, err]) {
    if (stream.isTTY && stream.columns !== undefined && stream.columns > 0) return stream.columns;
  }
  const fromEnv = Number(env.COLUMNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : PLAIN_COLUMNS;
}

function screenColumns(): number {
  return screenColumnsOf(process.stdout, process.stderr, process.env);
}

/** The most columns a terminal gives a character: two from U+1100 on (wide scripts, emoji), eight for a tab. */
function columnsOf(ch: string): number {
  if (ch === '\t') return 8;
  return (ch.codePointAt(0) ?? 0) >= 0x1100 ? 2 : 1;
}

/**
 * Cuts a line into rows of at most `width` columns, counted high (columnsOf), so that no row is
 * wider than the screen and the terminal never wraps one: a row it wrapped would start at column
 * 0, without the mark put before it (attack round 19, V5).
 */
export function screenRows(line: string, width: number): string[] {
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const ch of line) {
    const w = columnsOf(ch);
    if (used + w > width && row !== '') {
      rows.push(row);
      row = '';
      used = 0;
    }
    row += ch;
    used += w;
  }
  rows.push(row);
  return rows;
}

/** `text`'s lines cut to the screen, the first row of each after `first`, the rest after `rest`. */
function marked(text: string, first: string, rest: string, columns: number): string[] {
  const prefix = Math.max(
    ...[first, rest].map((p) => [...p].reduce((n, c) => n + columnsOf(c), 0)),
  );
  const width = Math.max(columns - prefix, 16);
  return text
    .split('\n')
    .flatMap((line) => screenRows(line, width).map((row, i) => `${i === 0 ? first : rest}${row}`));
}

/**
 * A version's definition as indented JSON, each line cut to the screen (a row after the first of a
 * line marked `↳ `): printed before the record, whose quarantine line and findings stay last.
 */
export function describeDefinition(definition: unknown, columns = screenColumns()): string {
  return marked(JSON.stringify(definition, null, 2), '', '↳ ', columns).join('\n');
}

/**
 * `tools show`: the version's record, its description with every screen row marked as the
 * description's (`  │ `: each line cut to the terminal's width, so none wraps to an unmarked row),
 * then its quarantine and findings last. A description — an upstream's text — that holds a forged
 * record after many blank lines can push the real header off the screen, but not the real
 * quarantine line and findings, and what it forges reads as description (attack round 18, U4;
 * round 19, V5).
 */
export function describeVersion(t: ToolVersionDetail, columns = screenColumns()): string {
  const lines = [
    `${t.id}@${t.version}  ${t.name}`,
    `  lifecycle:  ${t.lifecycle}${t.retire_at ? ` (retires ${t.retire_at})` : ''}`,
    `  class/tier: ${t.action_class} / ${t.access_tier}; data ${t.data_access}; egress ${t.egress}`,
    `  owner:      ${t.owner} (${t.provenance})`,
    `  hash:       ${t.definition_hash}`,
    '  description:',
    ...marked(t.description, '  │ ', '  │ ', columns),
    `  quarantine: ${t.quarantined ? 'YES' : 'no'}`,
    ...t.findings.flatMap((f) =>
      marked(
        `[${f.category}] ${f.field}: ${f.message.replace(/\n/g, '\\n')}`,
        '    - ',
        '      ',
        columns,
      ),
    ),
  ];
  return lines.join('\n');
}

/** `tools show ID@VERSION`: the definition first, so the record's quarantine line stays last. */
export function describeWithDefinition(t: ToolVersionDetail): string {
  return `${describeDefinition(t.definition)}\n\n${describeVersion(t)}`;
}

/** `tools show ID`: every version's record. */
export function describeVersions(versions: readonly ToolVersionDetail[]): string {
  return versions.map((v) => describeVersion(v)).join('\n\n');
}
