/**
 * @module What every command group of the `toolgate` command shares: the global options, opening
 * a gateway for one command and handing it the admin API, page options, parsers of arguments and
 * the lines a tool version prints as.
 */
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AdminApi } from '../api/index.js';
import { DEFAULT_ORIGIN } from '../audit/index.js';
import type { ToolVersionDetail, ToolVersionSummary } from '../catalog/index.js';
import {
  type Actor,
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  problem,
  ToolgateError,
} from '../core/index.js';
import { loadMasterKey } from '../credentials/index.js';
import { BOOTSTRAP_OPERATOR, type Operator } from '../operators/index.js';
import { openToolgate, type Toolgate, type ToolgateOptions } from '../toolgate.js';
import { makeOutput, type Output, reportError } from './output.js';
import { approvalSigner, auditSigner, jwtConfigFromEnv, teamsFromEnv } from './runtime-files.js';

export const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

export interface GlobalOptions {
  db?: string;
  json?: boolean;
  dataDir: string;
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

export const actor: Actor = { id: `cli:${safeUser()}`, via: 'cli' };

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

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** The gateway options every command opens with: keys and secrets from the data folder. */
function gatewayOptions(globals: GlobalOptions): ToolgateOptions {
  return {
    ...(globals.db ? { db: globals.db } : {}),
    approvalSigner: () => approvalSigner(globals.dataDir),
    masterKey: () => loadMasterKey({ dataDir: globals.dataDir }),
    protectedPaths: protectedPaths(globals.dataDir),
  };
}

/**
 * Opens toolgate, runs `fn` with the admin API and the operator this run acts as, closes; a
 * refusal becomes exit code 1 with a structured error. Commands get the admin API only: no
 * command runs a tool. The operator is the bootstrap operator (holding the data folder is holding
 * the admin token): it may administer and enrol, never approve.
 */
export function withAdmin(
  program: Command,
  fn: (admin: AdminApi, out: Output, operator: Operator) => Promise<void>,
  extra: Pick<ToolgateOptions, 'audit'> = {},
  /** Answers an error itself (true) instead of the usual refusal; e.g. a damaged database. */
  handled: (err: unknown, out: Output) => boolean = () => false,
): () => Promise<void> {
  return async () => {
    const globals = program.opts<GlobalOptions>();
    const out = makeOutput(globals.json === true);
    let tg: Toolgate | null = null;
    try {
      tg = await openToolgate({
        ...gatewayOptions(globals),
        auditSigner: () => auditSigner(globals.dataDir, DEFAULT_ORIGIN),
        // The running gateway checkpoints what the CLI appends (within its interval); only the
        // audit commands that need a signed head write one here.
        audit: { checkpoints: false },
        ...extra,
        teams: teamsFromEnv(),
        // One-shot commands watch nothing: the detectors run in `serve`.
        detectors: false,
      });
      await fn(tg.admin, out, BOOTSTRAP_OPERATOR);
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
  return openToolgate({ ...gatewayOptions(globals), ...(jwt ? { jwt } : {}) });
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

export function readInput(file: string): string {
  return readFileSync(file === '-' ? 0 : file, 'utf8');
}

export function versionLine(t: ToolVersionSummary): string[] {
  const state = t.quarantined ? `${t.lifecycle},QUARANTINED` : t.lifecycle;
  return [t.id, t.version, state, t.action_class, t.access_tier, t.owner];
}

export function describeVersion(t: ToolVersionDetail): string {
  const lines = [
    `${t.id}@${t.version}  ${t.name}`,
    `  lifecycle:  ${t.lifecycle}${t.retire_at ? ` (retires ${t.retire_at})` : ''}`,
    `  class/tier: ${t.action_class} / ${t.access_tier}; data ${t.data_access}; egress ${t.egress}`,
    `  owner:      ${t.owner} (${t.provenance})`,
    `  hash:       ${t.definition_hash}`,
    `  quarantine: ${t.quarantined ? 'YES' : 'no'}`,
    ...t.findings.map((f) => `    - [${f.category}] ${f.field}: ${f.message}`),
    `  ${t.description}`,
  ];
  return lines.join('\n');
}
