/**
 * @module The lines `serve` prints under the console's address while no operator account exists:
 * the exact commands that create the first admin with the bootstrap admin token (an account with
 * a password, its TOTP second factor) and where that admin signs in. Nothing is created for the
 * reader: a default account with a known password would be the first thing an attacker tries.
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, relative, sep } from 'node:path';
import { MIN_PASSWORD_LENGTH } from '../../domain/operators/index.js';

const DEFAULT_DATA_DIR = './data';

export interface FirstAdminContext {
  /** The console's address, e.g. http://127.0.0.1:8080/console. */
  readonly consoleUrl: string;
  /** Whether the bootstrap admin token is enabled (without it no first admin can be created). */
  readonly bootstrapEnabled: boolean;
  /** `serve --demo`: the first admin also approves, so the demo's approvals can be decided. */
  readonly demo: boolean;
  /** How this process was started: the CLI command a reader types (from process.argv[1]). */
  readonly script: string;
  /**
   * The Node this process runs on as a reader types it: `node` when that is the one their shell
   * finds, else its path (the checkout's Node 24 where the shell's `node` is older).
   */
  readonly runtime: string;
  readonly cwd: string;
  readonly db: string;
  readonly dataDir: string;
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * How a reader types the Node this process runs on (FirstAdminContext.runtime): `node` when the
 * first `node` on their PATH is this one, else this one's path. The `node_modules/.bin` folders an
 * npm script puts first on PATH are not the reader's shell, and are passed over.
 */
export function runtimeAsTyped(
  execPath: string = process.execPath,
  path: string = process.env.PATH ?? '',
): string {
  const own = realOrSelf(execPath);
  for (const dir of path.split(delimiter)) {
    if (dir === '' || dir.endsWith(`node_modules${sep}.bin`)) continue;
    const candidate = join(dir, 'node');
    if (existsSync(candidate)) return realOrSelf(candidate) === own ? 'node' : execPath;
  }
  return execPath;
}

/** The command's script relative to a checkout's own folder. */
const CHECKOUT_SCRIPT = join('dist', 'edge', 'cli', 'main.js');

/**
 * The CLI command as the reader types it: `toolgate` when run as the installed bin, `npx toolgate`
 * in a checkout's own folder (npx runs it on the checkout's Node 24 from node_modules/.bin, where
 * a shell's `node` may be an older one), else the runtime and the script's path; with `--db` /
 * `--data-dir` when this serve did not use the defaults.
 * A PostgreSQL URL may hold a password and banners end up in logs: it is never printed.
 */
export function cliCommand(ctx: FirstAdminContext): string {
  const path = shown(ctx);
  const script =
    basename(ctx.script) === 'toolgate'
      ? 'toolgate'
      : path === CHECKOUT_SCRIPT
        ? 'npx toolgate'
        : `${ctx.runtime} ${path}`;
  const flags: string[] = [];
  // The database the CLI opens by default on the same data folder (command-kit.ts, dbUrl).
  if (ctx.db !== `sqlite:${join(ctx.dataDir, 'toolgate.db')}`)
    flags.push(ctx.db.startsWith('sqlite:') ? `--db ${ctx.db}` : '--db <the same database URL>');
  if (ctx.dataDir !== DEFAULT_DATA_DIR) flags.push(`--data-dir ${ctx.dataDir}`);
  return [script, ...flags].join(' ');
}

function shown(ctx: FirstAdminContext): string {
  const rel = relative(ctx.cwd, ctx.script);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : ctx.script;
}

/** The banner lines; none once an operator account exists. */
export function firstAdminBanner(ctx: FirstAdminContext, operatorAccounts: number): string[] {
  if (operatorAccounts > 0) return [];
  if (!ctx.bootstrapEnabled)
    return [
      '  first admin: no operator account yet, and the bootstrap admin token is disabled;',
      '               enable it once to create the first admin (see docs/operators-and-approvals.md)',
    ];
  const cli = cliCommand(ctx);
  const roles = ctx.demo ? 'admin,approver' : 'admin';
  return [
    '  first admin: no operator account yet. With the bootstrap admin token (this CLI on this',
    '               data folder uses it when no TOOLGATE_TOKEN is set), create one:',
    `    1. ${cli} operators create admin --roles ${roles} --password-file -`,
    `       (type a password of at least ${MIN_PASSWORD_LENGTH} characters, Enter, then Ctrl-D)`,
    ...(ctx.demo
      ? ['       (demo: also an approver, so you can decide the demo calls that wait)']
      : []),
    `    2. ${cli} approvers enroll admin`,
    '       (add the secret it prints to an authenticator app: your second factor)',
    `    3. sign in at ${ctx.consoleUrl} as admin with that password and the app's code`,
  ];
}
