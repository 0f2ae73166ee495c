/**
 * @module The `command` runtime: a tool's argv from its definition, its arguments as JSON on
 * stdin, its result as JSON on stdout, run through the driver its `sandbox.isolation` names.
 * Arguments never reach a command line. Anything but a JSON document on stdout is a failure.
 */
import { realpathSync, statSync } from 'node:fs';
import type { ToolDefinition } from '../../domain/catalog/index.js';
import { codeFiles, commandCodeHash } from './code-hash.js';
import type { RunOutcome } from './run-outcome.js';
import type { DriverName, ReadOnlyBind, RunSpec } from './run-spec.js';

/** Deny codes a sandboxed run can end in (a subset of the error catalogue). */
export type SandboxDenyCode =
  | 'SANDBOX_UNAVAILABLE'
  | 'SANDBOX_TIMEOUT'
  | 'SANDBOX_LIMIT'
  | 'EXECUTION_FAILED';

export type CommandResult =
  | { readonly ok: true; readonly output: unknown; readonly outcome: RunOutcome }
  | {
      readonly ok: false;
      readonly code: SandboxDenyCode;
      readonly rule: string;
      readonly message: string;
      /** The run's outcome kind for the audit record, or a refusal before any run. */
      readonly outcome: string;
      readonly run?: RunOutcome;
    };

export type CommandPlan =
  | { readonly ok: true; readonly driver: DriverName; readonly spec: RunSpec }
  | Extract<CommandResult, { ok: false }>;

/** Folders of the host a tool's path root may not bring into a sandbox. */
const NEVER_BOUND = ['/proc', '/sys', '/dev', '/run'];

/** System directories already visible in every sandbox: never bound again. */
const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/', '/etc/'];

/**
 * The tool's own files: absolute argv entries that are regular files outside the system
 * directories, each bound read-only at its own path (the file only, never its folder).
 */
export function toolFileBinds(argv: readonly string[]): ReadOnlyBind[] {
  // The same files code_hash covers, less those the sandbox's root already shows.
  return codeFiles(argv)
    .filter((file) => !SYSTEM_PREFIXES.some((p) => file.startsWith(p)))
    .map((file) => ({ source: file, target: file }));
}

/**
 * A tool's path roots (`arguments_policy.path_roots`), each an existing directory bound read-only
 * at its own path: the gate hands the tool real paths under them, and that is all of the host's
 * files it can open. A root that is missing or not a directory is left out.
 */
export function pathRootBinds(roots: readonly string[] | undefined): ReadOnlyBind[] {
  const binds: ReadOnlyBind[] = [];
  for (const root of roots ?? []) {
    if (!root.startsWith('/')) continue;
    let real: string;
    try {
      // The gate resolves paths from the real root and hands the tool real paths: bind that.
      real = realpathSync(root);
      if (!statSync(real).isDirectory()) continue;
    } catch {
      // Not there: the gate refuses every path under it anyway.
      continue;
    }
    // The host's root and its kernel folders are never bound in, whatever a definition says:
    // a sandbox is built from a minimal root, not the host's.
    if (real === '/' || NEVER_BOUND.some((p) => real === p || real.startsWith(`${p}/`))) continue;
    if (binds.some((b) => b.source === real)) continue;
    binds.push({ source: real, target: real });
  }
  return binds;
}

function refuse(code: SandboxDenyCode, rule: string, message: string, outcome = rule): CommandPlan {
  return { ok: false, code, rule, message, outcome };
}

/** Which driver and run spec a command tool gets, or why it may not run at all. */
export function planCommand(
  def: ToolDefinition,
  args: unknown,
  options: { readonly egressSocket?: string; readonly env?: Readonly<Record<string, string>> } = {},
): CommandPlan {
  if (def.runtime.kind !== 'command') {
    return refuse('EXECUTION_FAILED', 'runtime.unavailable', 'not a command tool');
  }
  const isolation = def.sandbox.isolation;
  if (isolation === 'none') {
    return refuse(
      'SANDBOX_UNAVAILABLE',
      'sandbox.isolation_none',
      'command tools always run in a sandbox; this tool declares isolation "none"',
    );
  }
  const pure =
    def.data_access === 'none' && def.egress.mode === 'none' && def.sandbox.network === 'none';
  if (isolation === 'process' && !pure) {
    return refuse(
      'SANDBOX_UNAVAILABLE',
      'sandbox.process_not_pure',
      'process isolation is only for pure computation (no data access, no egress)',
    );
  }
  if (def.sandbox.network === 'egress_proxy' && options.egressSocket === undefined) {
    return refuse(
      'SANDBOX_UNAVAILABLE',
      'sandbox.egress_unavailable',
      'this tool needs the egress proxy, which is not running on this gateway',
    );
  }
  const argv = def.runtime.argv;
  if (def.code_hash !== undefined) {
    let actual: string;
    try {
      actual = commandCodeHash(argv);
    } catch {
      actual = 'unreadable';
    }
    if (actual !== def.code_hash) {
      return refuse(
        'EXECUTION_FAILED',
        'sandbox.code_changed',
        "the tool's code does not match its registered code_hash; it is not run",
      );
    }
  }
  return {
    ok: true,
    driver: isolation,
    spec: {
      argv,
      stdin: JSON.stringify(args),
      ...(options.env ? { env: options.env } : {}),
      limits: def.sandbox.limits,
      binds: [...toolFileBinds(argv), ...pathRootBinds(def.arguments_policy.path_roots)],
      ...(def.sandbox.network === 'egress_proxy' && options.egressSocket !== undefined
        ? { egressSocket: options.egressSocket }
        : {}),
    },
  };
}

/** What a finished run means for the call; never echoes the tool's stderr to the caller. */
export function interpretRun(run: RunOutcome): CommandResult {
  const fail = (code: SandboxDenyCode, rule: string, message: string): CommandResult => ({
    ok: false,
    code,
    rule,
    message,
    outcome: run.kind,
    run,
  });
  switch (run.kind) {
    case 'ok': {
      let output: unknown;
      try {
        output = JSON.parse(run.stdout);
      } catch {
        return fail('EXECUTION_FAILED', 'execute.output_not_json', 'the tool did not print JSON');
      }
      return { ok: true, output, outcome: run };
    }
    case 'exit_nonzero':
      return fail('EXECUTION_FAILED', 'execute.exit_nonzero', 'the tool failed');
    case 'timeout':
      return fail('SANDBOX_TIMEOUT', 'sandbox.timeout', `the tool ran past ${run.limitMs} ms`);
    case 'cpu_limit':
      return fail('SANDBOX_LIMIT', 'sandbox.cpu_limit', `the tool used over ${run.limitMs} ms CPU`);
    case 'memory_limit':
      return fail('SANDBOX_LIMIT', 'sandbox.memory_limit', `the tool ran out of ${run.limitMb} MB`);
    case 'output_limit':
      return fail(
        'SANDBOX_LIMIT',
        'sandbox.output_limit',
        `the tool wrote over ${run.limitBytes} bytes`,
      );
    case 'scratch_full':
      return fail(
        'SANDBOX_LIMIT',
        'sandbox.scratch_full',
        `the tool filled its ${run.limitMb} MB scratch`,
      );
    case 'spawn_failed':
      return fail('EXECUTION_FAILED', 'sandbox.spawn_failed', 'the sandbox could not be started');
    case 'driver_unavailable':
      return fail(
        'SANDBOX_UNAVAILABLE',
        'sandbox.unavailable',
        `the ${run.driver} sandbox this tool requires is not available here (${run.install})`,
      );
  }
}
