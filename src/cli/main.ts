#!/usr/bin/env node
/**
 * @module The `toolgate` command (DESIGN.md C18). Every command goes through the same services as
 * REST; `--json` prints machine-readable output, and refusals exit 1 with `{ error: {code,…} }`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_ORIGIN, LogVerifier, type VerifyReport, verifyBundle } from '../audit/index.js';
import type { ToolVersionDetail, ToolVersionSummary } from '../catalog/index.js';
import {
  type Actor,
  DEFAULT_PAGE_LIMIT,
  decodeCursor,
  isStoreCorrupt,
  MAX_PAGE_LIMIT,
  pageFromRows,
  pageOf,
  ToolgateError,
} from '../core/index.js';
import { loadMasterKey, type SecretInfo } from '../credentials/index.js';
import { codeFiles, commandCodeHash, SandboxService } from '../sandbox/index.js';
import { openToolgate, type Toolgate, type ToolgateOptions } from '../toolgate.js';
import { makeOutput, type Output, reportError, table, withNextCursor } from './output.js';
import {
  approvalSigner,
  approverSecrets,
  auditSigner,
  enrollApprover,
  jwtConfigFromEnv,
  teamsFromEnv,
} from './runtime-files.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** Parses an integer option within bounds; anything else is a usage error, never NaN. */
/** A comma-separated option value as its trimmed, non-empty parts. */
function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function int(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    }
    return n;
  };
}

const actor: Actor = { id: `cli:${safeUser()}`, via: 'cli' };

/** `--cursor` and `--limit` of every list command (the same walk as the REST lists). */
function pageOptions(command: Command): Command {
  return command
    .option('--cursor <cursor>', 'the cursor the previous page printed')
    .addOption(
      new Option('--limit <n>', 'entries per page')
        .default(DEFAULT_PAGE_LIMIT)
        .argParser(int(1, MAX_PAGE_LIMIT)),
    );
}

interface PageFlags {
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

interface GlobalOptions {
  db?: string;
  json?: boolean;
  dataDir: string;
}

const program = new Command()
  .name('toolgate')
  .description('A governed tool gateway for AI agents')
  .version(VERSION)
  .addOption(
    new Option('--db <url>', 'database: sqlite:PATH or postgres://…')
      .env('TOOLGATE_DB')
      .default('sqlite:./data/toolgate.db'),
  )
  .option('--json', 'print JSON')
  .addOption(
    new Option(
      '--data-dir <dir>',
      'keys beside the database (approval signing key, approvers, secrets master key)',
    )
      .env('TOOLGATE_DATA_DIR')
      .default('./data'),
  )
  .showHelpAfterError();

/** Opens toolgate, runs `fn`, closes; a refusal becomes exit code 1 with a structured error. */
function withToolgate(
  fn: (tg: Toolgate, out: Output) => Promise<void>,
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
        ...(globals.db ? { db: globals.db } : {}),
        approvalSigner: () => approvalSigner(globals.dataDir),
        approverTotpSecrets: approverSecrets(globals.dataDir),
        masterKey: () => loadMasterKey({ dataDir: globals.dataDir }),
        protectedPaths: protectedPaths(globals.dataDir),
        auditSigner: () => auditSigner(globals.dataDir, DEFAULT_ORIGIN),
        // The running gateway checkpoints what the CLI appends (within its interval); only the
        // audit commands that need a signed head write one here.
        audit: { checkpoints: false },
        ...extra,
        teams: teamsFromEnv(),
        // One-shot commands watch nothing: the detectors run in `serve`.
        detectors: false,
      });
      await fn(tg, out);
    } catch (err) {
      if (!handled(err, out)) process.exitCode = reportError(err, out.json);
    } finally {
      await tg?.close();
    }
  };
}

/** The gateway's own files, which no sandbox may see (the database's are added by openToolgate). */
function protectedPaths(dataDir: string): string[] {
  const keyFile = process.env.TOOLGATE_MASTER_KEY_FILE;
  return [dataDir, ...(keyFile ? [keyFile] : [])];
}

/** `id@version`; a bare id is refused for commands that change one version. */
function parseRef(ref: string): { id: string; version: string } {
  const at = ref.lastIndexOf('@');
  if (at <= 0 || at === ref.length - 1)
    throw new TypeError(`expected TOOL_ID@VERSION, got "${ref}"`);
  return { id: ref.slice(0, at), version: ref.slice(at + 1) };
}

function readInput(file: string): string {
  return readFileSync(file === '-' ? 0 : file, 'utf8');
}

function versionLine(t: ToolVersionSummary): string[] {
  const state = t.quarantined ? `${t.lifecycle},QUARANTINED` : t.lifecycle;
  return [t.id, t.version, state, t.action_class, t.access_tier, t.owner];
}

function describeVersion(t: ToolVersionDetail): string {
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

program
  .command('serve')
  .description('start the gateway (REST + OpenAPI docs) on 127.0.0.1')
  .addOption(
    new Option('--host <host>', 'interface to bind').env('TOOLGATE_HOST').default('127.0.0.1'),
  )
  .addOption(
    new Option('--port <port>', 'port')
      .env('TOOLGATE_PORT')
      .default(8080)
      .argParser(int(0, 65_535)),
  )
  .option('--demo', 'load the demo catalog (idempotent)')
  .addOption(
    new Option(
      '--admin-token-file <path>',
      'where the admin token is kept (created on first start)',
    ).default('./data/admin-token'),
  )
  .addOption(
    new Option('--body-limit <bytes>', 'largest request body')
      .default(1_048_576)
      .argParser(int(1024, 1_073_741_824)),
  )
  .addOption(
    new Option(
      '--allowed-origins <origins>',
      'comma-separated browser origins (scheme://host[:port]) allowed at /mcp besides loopback ones',
    ).env('TOOLGATE_ALLOWED_ORIGINS'),
  )
  .addOption(
    new Option(
      '--allowed-hosts <hosts>',
      'comma-separated Host names (or host:port) /mcp answers besides loopback names',
    ).env('TOOLGATE_ALLOWED_HOSTS'),
  )
  // Caps and admission (issue 11); README "Limits and overload" has the rule and the defaults.
  .addOption(
    new Option('--max-sessions-per-agent <n>', 'open sessions of one agent (REST + MCP)')
      .default(64)
      .argParser(int(1, 1_000_000)),
  )
  .addOption(
    new Option('--max-pending-approvals-per-agent <n>', 'pending approval requests of one agent')
      .default(50)
      .argParser(int(1, 1_000_000)),
  )
  .addOption(
    new Option('--max-mcp-sessions <n>', 'MCP sessions overall (the LRU idle one is evicted)')
      .default(1000)
      .argParser(int(1, 1_000_000)),
  )
  .addOption(
    new Option('--max-in-flight <n>', 'requests handled at once (a bounded queue waits ≤ 2 s)')
      .default(64)
      .argParser(int(1, 100_000)),
  )
  .addOption(
    new Option('--max-in-flight-per-caller <n>', 'running + queued requests of one credential')
      .default(16)
      .argParser(int(1, 100_000)),
  )
  .addOption(
    new Option('--max-event-loop-delay-ms <ms>', 'refuse new requests while the loop lags (0: off)')
      .default(1000)
      .argParser(int(0, 600_000)),
  )
  .action(
    async (opts: {
      host: string;
      port: number;
      demo?: boolean;
      adminTokenFile: string;
      bodyLimit: number;
      allowedOrigins?: string;
      allowedHosts?: string;
      maxSessionsPerAgent: number;
      maxPendingApprovalsPerAgent: number;
      maxMcpSessions: number;
      maxInFlight: number;
      maxInFlightPerCaller: number;
      maxEventLoopDelayMs: number;
    }) => {
      const globals = program.opts<GlobalOptions>();
      try {
        // Loaded only here: the other commands need not pay for Fastify and the docs UI.
        const { serve } = await import('./serve.js');
        await serve({
          dataDir: globals.dataDir,
          db: globals.db ?? 'sqlite:./data/toolgate.db',
          host: opts.host,
          port: opts.port,
          demo: opts.demo === true,
          adminTokenFile: opts.adminTokenFile,
          bodyLimit: opts.bodyLimit,
          version: VERSION,
          allowedOrigins: splitList(opts.allowedOrigins),
          allowedHosts: splitList(opts.allowedHosts),
          limits: {
            maxSessionsPerAgent: opts.maxSessionsPerAgent,
            maxPendingApprovalsPerAgent: opts.maxPendingApprovalsPerAgent,
            maxMcpSessions: opts.maxMcpSessions,
            maxInFlight: opts.maxInFlight,
            maxInFlightPerCaller: opts.maxInFlightPerCaller,
            maxEventLoopDelayMs: opts.maxEventLoopDelayMs,
          },
        });
      } catch (err) {
        process.exitCode = reportError(err, globals.json === true);
      }
    },
  );

program
  .command('mcp')
  .description('serve one agent over MCP on stdio (for a local agent; HTTP clients use /mcp)')
  .addOption(
    new Option(
      '--agent-key <key>',
      'the agent API key or JWT (prefer the environment variable)',
    ).env('TOOLGATE_AGENT_KEY'),
  )
  .action(async (opts: { agentKey?: string }) => {
    const globals = program.opts<GlobalOptions>();
    const log = (line: string) => process.stderr.write(`${line}\n`);
    let tg: Toolgate | null = null;
    try {
      if (!opts.agentKey) {
        throw new ToolgateError(
          'UNAUTHENTICATED',
          'set TOOLGATE_AGENT_KEY (or --agent-key) to the agent API key or JWT',
          {},
        );
      }
      const jwt = jwtConfigFromEnv();
      tg = await openToolgate({
        ...(globals.db ? { db: globals.db } : {}),
        approvalSigner: () => approvalSigner(globals.dataDir),
        approverTotpSecrets: approverSecrets(globals.dataDir),
        masterKey: () => loadMasterKey({ dataDir: globals.dataDir }),
        protectedPaths: protectedPaths(globals.dataDir),
        ...(jwt ? { jwt } : {}),
      });
      const { serveMcpStdio } = await import('../mcp/index.js');
      await serveMcpStdio(tg, { version: VERSION, token: opts.agentKey, log });
    } catch (err) {
      // stdout belongs to JSON-RPC: errors go to stderr only.
      process.exitCode = reportError(err, false);
    } finally {
      await tg?.close();
    }
  });

program
  .command('apply')
  .description('apply a configuration file (YAML or JSON: Tool, Agent, Grant) in one transaction')
  .requiredOption('-f, --file <path>', 'file to apply, - for stdin')
  .option('--dry-run', 'print what would change and write nothing')
  .action((opts: { file: string; dryRun?: boolean }) =>
    withToolgate(async (tg, out) => {
      const result = await tg.config.applyText(readInput(opts.file), actor, {
        dryRun: opts.dryRun === true,
      });
      out.result(result, () => {
        const mark = { create: '+', update: '~', unchanged: '=' } as const;
        const lines = result.changes.map((c) => `${mark[c.action]} ${c.subject}: ${c.summary}`);
        const n = result.changes.filter((c) => c.action !== 'unchanged').length;
        lines.push(
          result.dryRun
            ? `dry run: ${n} change(s) would be applied, nothing written`
            : `${n} change(s) applied`,
        );
        return lines.join('\n');
      });
    })(),
  );

const tools = program.command('tools').description('the tool catalog');

pageOptions(
  tools
    .command('list')
    .description('list every registered tool version')
    .addOption(
      new Option('--lifecycle <state>').choices(['draft', 'active', 'deprecated', 'retired']),
    )
    .option('--owner <team>')
    .option('--quarantined', 'only quarantined versions'),
).action(
  (
    opts: {
      lifecycle?: 'draft' | 'active' | 'deprecated' | 'retired';
      owner?: string;
      quarantined?: boolean;
    } & PageFlags,
  ) =>
    withToolgate(async (tg, out) => {
      const all = await tg.catalog.list({
        ...(opts.lifecycle ? { lifecycle: opts.lifecycle } : {}),
        ...(opts.owner ? { owner: opts.owner } : {}),
        ...(opts.quarantined ? { quarantined: true } : {}),
      });
      const page = pageOf('tools', all, (t) => [t.id, t.version], 'asc', opts);
      const list = page.items;
      out.result({ tools: list, next_cursor: page.next_cursor }, () =>
        withNextCursor(
          list.length === 0
            ? 'no tools'
            : table([
                ['ID', 'VERSION', 'STATE', 'CLASS', 'TIER', 'OWNER'],
                ...list.map(versionLine),
              ]),
          page.next_cursor,
        ),
      );
    })(),
);

tools
  .command('show <ref>')
  .description('show a tool (all versions) or one version: ID or ID@VERSION')
  .action((ref: string) =>
    withToolgate(async (tg, out) => {
      if (ref.includes('@')) {
        const { id, version } = parseRef(ref);
        const t = await tg.catalog.get(id, version);
        out.result(t, () => `${describeVersion(t)}\n${JSON.stringify(t.definition, null, 2)}`);
      } else {
        const versions = await tg.catalog.versions(ref);
        out.result({ id: ref, versions }, () => versions.map(describeVersion).join('\n\n'));
      }
    })(),
  );

tools
  .command('search [query]')
  .description('search offered tools by text and tags (as agents discover them)')
  .option('--tags <list>', 'comma-separated tags that must all match')
  .addOption(new Option('--limit <n>', 'most results').default(20).argParser(int(1, 100)))
  .action((query: string | undefined, opts: { tags?: string; limit: number }) =>
    withToolgate(async (tg, out) => {
      const results = await tg.discovery.search({
        ...(query ? { q: query } : {}),
        tags: (opts.tags ?? '').split(',').filter((t) => t !== ''),
        limit: opts.limit,
      });
      out.result({ results }, () =>
        results.length === 0
          ? 'no match'
          : table([
              ['ID', 'VERSION', 'SCORE', 'STATE', 'DESCRIPTION'],
              ...results.map((r) => [
                r.id,
                r.version,
                String(r.score),
                r.lifecycle,
                r.description.slice(0, 60),
              ]),
            ]),
      );
    })(),
  );

tools
  .command('activate <ref>')
  .description('activate a draft, or undo a deprecation')
  .action((ref: string) =>
    withToolgate(async (tg, out) => {
      const { id, version } = parseRef(ref);
      const t = await tg.catalog.activate(id, version, actor);
      out.result(t, () => `${id}@${version} is ${t.lifecycle}`);
    })(),
  );

tools
  .command('deprecate <ref>')
  .description('deprecate a version; it retires when the migration window ends')
  .addOption(
    new Option('--window <days>', 'migration window in days').default(30).argParser(int(0, 3650)),
  )
  .option('--reason <text>')
  .action((ref: string, opts: { window: number; reason?: string }) =>
    withToolgate(async (tg, out) => {
      const { id, version } = parseRef(ref);
      const t = await tg.catalog.deprecate(id, version, actor, {
        windowDays: opts.window,
        ...(opts.reason ? { reason: opts.reason } : {}),
      });
      out.result(t, () => `${id}@${version} is deprecated; retires ${t.retire_at}`);
    })(),
  );

tools
  .command('retire <ref>')
  .description('retire a version now')
  .option('--reason <text>')
  .action((ref: string, opts: { reason?: string }) =>
    withToolgate(async (tg, out) => {
      const { id, version } = parseRef(ref);
      const t = await tg.catalog.retire(
        id,
        version,
        actor,
        opts.reason ? { reason: opts.reason } : {},
      );
      out.result(t, () => `${id}@${version} is retired`);
    })(),
  );

for (const op of ['quarantine', 'release'] as const) {
  tools
    .command(`${op} <ref>`)
    .description(
      op === 'release' ? 'release a quarantined version (recorded)' : 'quarantine a version',
    )
    .requiredOption('--reason <text>', 'why (recorded in the event log)')
    .action((ref: string, opts: { reason: string }) =>
      withToolgate(async (tg, out) => {
        const { id, version } = parseRef(ref);
        const t = await tg.catalog[op](id, version, actor, opts.reason);
        out.result(
          t,
          () => `${id}@${version} is ${t.quarantined ? 'quarantined' : 'released from quarantine'}`,
        );
      })(),
    );
}

tools
  .command('hash <argv...>')
  .description(
    "print the code_hash of a command tool's argv (the files it names by absolute path), e.g. `tools hash -- node /srv/tools/x.mjs`",
  )
  .action((argv: string[]) => {
    const out = makeOutput(program.opts<GlobalOptions>().json === true);
    try {
      const files = codeFiles(argv);
      const codeHash = commandCodeHash(argv);
      out.result({ code_hash: codeHash, files }, () =>
        [codeHash, ...files.map((f) => `  covers ${f}`)].join('\n'),
      );
    } catch (err) {
      process.exitCode = reportError(err, out.json);
    }
  });

const agents = program.command('agents').description('agents, their API keys and grants');

pageOptions(agents.command('list')).action((opts: PageFlags) =>
  withToolgate(async (tg, out) => {
    const page = pageOf('agents', await tg.agents.list(), (a) => [a.id], 'asc', opts);
    const list = page.items;
    out.result({ agents: list, next_cursor: page.next_cursor }, () =>
      withNextCursor(
        list.length === 0
          ? 'no agents'
          : table([
              ['ID', 'OWNER', 'TIER', 'ENABLED', 'CAPABILITIES'],
              ...list.map((a) => [
                a.id,
                a.owner,
                a.tier,
                String(a.enabled),
                a.capabilities.join(','),
              ]),
            ]),
        page.next_cursor,
      ),
    );
  })(),
);

agents
  .command('create <id>')
  .description('create an agent (if new) and print a new API key for it, once')
  .option('--owner <team>', 'owning team', 'unassigned')
  .addOption(
    new Option('--tier <tier>', 'highest tool tier it may be offered').choices([
      'public',
      'restricted',
      'privileged',
    ]),
  )
  .action((id: string, opts: { owner: string; tier?: 'public' | 'restricted' | 'privileged' }) =>
    withToolgate(async (tg, out) => {
      const exists = (await tg.agents.list()).some((a) => a.id === id);
      if (!exists) {
        await tg.config.apply(
          [
            {
              kind: 'Agent',
              spec: { id, owner: opts.owner, ...(opts.tier ? { tier: opts.tier } : {}) },
            },
          ],
          actor,
        );
      }
      const issued = await tg.keys.issue(id, actor);
      out.result(
        { agent_id: id, created: !exists, key_id: issued.keyId, api_key: issued.apiKey },
        () =>
          [
            `${exists ? 'agent' : 'created agent'} ${id}`,
            `API key (shown once, store it now): ${issued.apiKey}`,
          ].join('\n'),
      );
    })(),
  );

agents
  .command('revoke-key <keyId>')
  .description('revoke an API key')
  .action((keyId: string) =>
    withToolgate(async (tg, out) => {
      await tg.keys.revoke(keyId, actor);
      out.result({ revoked: keyId }, () => `key ${keyId} revoked`);
    })(),
  );

const grants = program.command('grants').description('capability grants (admin only)');

pageOptions(grants.command('list')).action((opts: PageFlags) =>
  withToolgate(async (tg, out) => {
    const all = await tg.agents.grants();
    const page = pageOf('grants', all, (g) => [g.agent_id, g.capability], 'asc', opts);
    const list = page.items;
    out.result({ grants: list, next_cursor: page.next_cursor }, () =>
      withNextCursor(
        list.length === 0
          ? 'no grants'
          : table([
              ['AGENT', 'CAPABILITY', 'BY', 'AT'],
              ...list.map((g) => [g.agent_id, g.capability, g.created_by, g.created_at]),
            ]),
        page.next_cursor,
      ),
    );
  })(),
);

grants
  .command('add <agent> <capabilities...>')
  .description('grant capabilities to an agent')
  .action((agent: string, capabilities: string[]) =>
    withToolgate(async (tg, out) => {
      const result = await tg.config.apply(
        [{ kind: 'Grant', spec: { agent, capabilities } }],
        actor,
      );
      out.result(result, () => result.changes.map((c) => c.summary).join('\n'));
    })(),
  );

grants
  .command('remove <agent> <capabilities...>')
  .description('revoke capabilities of an agent')
  .action((agent: string, capabilities: string[]) =>
    withToolgate(async (tg, out) => {
      const revoked = await tg.agents.revoke(agent, capabilities, actor);
      out.result({ revoked }, () =>
        revoked.length > 0 ? `revoked ${revoked.join(', ')}` : 'nothing to revoke',
      );
    })(),
  );

const changes = program
  .command('changes')
  .description('privileged grants and irreversible tools waiting for approvers (four eyes)');

pageOptions(
  changes
    .command('list')
    .addOption(new Option('--status <status>').choices(['pending', 'applied', 'rejected'])),
).action((opts: { status?: string } & PageFlags) =>
  withToolgate(async (tg, out) => {
    const page = await tg.changes.page(opts.status, opts);
    const list = page.items;
    out.result({ changes: list, next_cursor: page.next_cursor }, () =>
      withNextCursor(
        list.length === 0
          ? 'no changes'
          : table([
              ['ID', 'STATUS', 'SUBJECT', 'APPROVALS', 'REQUESTED BY'],
              ...list.map((c) => [
                c.id,
                c.status,
                c.subject,
                `${c.approvers.length}/${c.required}`,
                c.requested_by,
              ]),
            ]),
        page.next_cursor,
      ),
    );
  })(),
);

changes
  .command('approve <id>')
  .description(
    "one approver's approval, proven by their TOTP; applies when enough distinct approvers agree",
  )
  .requiredOption('--approver <id>', 'an enrolled approver (toolgate approvers enroll)')
  .requiredOption('--totp <code>', "the approver's current code")
  .action((id: string, opts: { approver: string; totp: string }) =>
    withToolgate(async (tg, out) => {
      const c = await tg.changes.approve(id, opts.approver, opts.totp);
      out.result(
        c,
        () => `${c.id}: ${c.subject}: ${c.status} (${c.approvers.length}/${c.required} approvers)`,
      );
    })(),
  );

changes
  .command('reject <id>')
  .requiredOption('--reason <text>')
  .action((id: string, opts: { reason: string }) =>
    withToolgate(async (tg, out) => {
      const c = await tg.changes.reject(id, actor, opts.reason);
      out.result(c, () => `${c.id} rejected`);
    })(),
  );

const approvers = program.command('approvers').description('people who approve calls');

approvers
  .command('enroll <id>')
  .description(
    "create an approver's second factor (TOTP); prints the secret and an otpauth URI once",
  )
  .action((id: string) => {
    const globals = program.opts<GlobalOptions>();
    const out = makeOutput(globals.json === true);
    try {
      const { secret, uri } = enrollApprover(globals.dataDir, id);
      out.result({ approver: id, secret, otpauth_uri: uri }, () =>
        [
          `approver ${id} enrolled; add this to an authenticator app (shown once):`,
          uri,
          `secret: ${secret}`,
        ].join('\n'),
      );
    } catch (err) {
      process.exitCode = reportError(err, out.json);
    }
  });

approvers
  .command('status <id>')
  .description("an approver's second-factor state: consecutive failures, backoff, lockout")
  .action((id: string) =>
    withToolgate(async (tg, out) => {
      const s = await tg.secondFactor.state(id);
      out.result(s, () =>
        s.locked_until
          ? `${id}: locked until ${s.locked_until} after ${s.failures} failed codes`
          : `${id}: ${s.failures} failed codes${s.next_attempt_at ? `, next attempt at ${s.next_attempt_at}` : ''}`,
      );
    })(),
  );

approvers
  .command('unlock <id>')
  .description(
    "clear an approver's failed second-factor codes and lockout (audited); the way out of a lockout",
  )
  .action((id: string) =>
    withToolgate(async (tg, out) => {
      const s = await tg.secondFactor.unlock(id, actor);
      out.result(s, () => `${id}: unlocked`);
    })(),
  );

const approvals = program.command('approvals').description('calls waiting for a human decision');

pageOptions(
  approvals
    .command('list')
    .addOption(
      new Option('--status <status>').choices([
        'pending',
        'approved',
        'rejected',
        'consumed',
        'expired',
      ]),
    ),
).action((opts: { status?: string } & PageFlags) =>
  withToolgate(async (tg, out) => {
    const page = await tg.approvals.page(opts.status, opts);
    const list = page.items;
    out.result({ approvals: list, next_cursor: page.next_cursor }, () =>
      withNextCursor(
        list.length === 0
          ? 'no approvals'
          : table([
              ['ID', 'STATUS', 'AGENT', 'TOOL', 'CLASS', 'CREATED'],
              ...list.map((a) => [
                a.id,
                a.status,
                a.agent_id,
                `${a.tool_id}@${a.tool_version}`,
                a.action_class,
                a.created_at,
              ]),
            ]),
        page.next_cursor,
      ),
    );
  })(),
);

approvals
  .command('show <id>')
  .description('the resolved call the agent wants to make: tool, literal arguments, destination')
  .action((id: string) =>
    withToolgate(async (tg, out) => {
      const a = await tg.approvals.get(id);
      out.result(a, () =>
        [
          `${a.id}  ${a.status}  ${a.tool_id}@${a.tool_version} (${a.action_class})`,
          `agent ${a.agent_id}${a.user_id ? ` on behalf of ${a.user_id}` : ''}, session ${a.session_id}`,
          `destination: ${a.rendered.destination_hosts.join(', ') || '(none)'}`,
          `second factor: ${a.second_factor ? 'required' : 'no'}`,
          'arguments:',
          JSON.stringify(a.rendered.arguments, null, 2),
        ].join('\n'),
      );
    })(),
  );

approvals
  .command('approve <id>')
  .description('approve: the agent may run exactly this call, once')
  .option('--approver <id>', 'who approves (their TOTP is checked where required)')
  .option('--totp <code>', 'second factor, for irreversible actions')
  .option('--reason <text>')
  .action((id: string, opts: { approver?: string; totp?: string; reason?: string }) =>
    withToolgate(async (tg, out) => {
      const a = await tg.approvals.approve(
        id,
        opts.approver ? { id: opts.approver, via: 'cli' } : actor,
        {
          ...(opts.totp ? { totp: opts.totp } : {}),
          ...(opts.reason ? { reason: opts.reason } : {}),
        },
      );
      out.result(a, () => `${a.id} approved by ${a.decided_by}`);
    })(),
  );

approvals
  .command('reject <id>')
  .requiredOption('--reason <text>')
  .option('--approver <id>')
  .action((id: string, opts: { reason: string; approver?: string }) =>
    withToolgate(async (tg, out) => {
      const a = await tg.approvals.reject(
        id,
        opts.approver ? { id: opts.approver, via: 'cli' } : actor,
        opts.reason,
      );
      out.result(a, () => `${a.id} rejected`);
    })(),
  );

program
  .command('events')
  .description('the administrative event record')
  .command('list')
  .option('--subject <subject>', 'e.g. tool:send_email@1.0.0')
  .addOption(
    new Option('--after <seq>', 'only events after this sequence number').argParser(
      int(0, Number.MAX_SAFE_INTEGER),
    ),
  )
  .option('--cursor <cursor>', 'the cursor the previous page printed')
  .addOption(new Option('--limit <n>', 'most events').default(100).argParser(int(1, 10_000)))
  .action((opts: { subject?: string; after?: number; cursor?: string; limit: number }) =>
    withToolgate(async (tg, out) => {
      const after =
        opts.cursor !== undefined ? Number(decodeCursor('events', opts.cursor)[0]) : opts.after;
      const rows = await tg.events.list({
        limit: opts.limit + 1,
        ...(opts.subject ? { subject: opts.subject } : {}),
        ...(after !== undefined ? { afterSeq: after } : {}),
      });
      const page = pageFromRows('events', rows, (r) => [Number(r.seq)], opts.limit);
      const events = page.items;
      out.result(
        {
          events: events.map((e) => ({ ...e, details: JSON.parse(e.details) as unknown })),
          next_cursor: page.next_cursor,
        },
        () =>
          withNextCursor(
            table(events.map((e) => [String(e.seq), e.at, e.actor, e.action, e.subject])),
            page.next_cursor,
          ),
      );
    })(),
  );

// Secrets: values come from stdin or a file, never from argv (shell history, `ps`), and are
// never printed; every command reports the version and key id instead.
const secrets = program
  .command('secrets')
  .description('tool credentials, encrypted at rest (values are read from stdin, never printed)');

/** The value from --from-file or stdin, with one trailing newline (from `echo`, editors) removed. */
function readSecretValue(fromFile: string | undefined): string {
  if (fromFile === undefined && process.stdin.isTTY) {
    process.stderr.write('secret value (end with Ctrl-D): ');
  }
  const text = readFileSync(fromFile ?? 0, 'utf8');
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
}

function secretLine(s: SecretInfo): string {
  return `${s.tool_id}/${s.name} (${s.environment}) version ${s.version}, master key ${s.key_id}`;
}

interface SecretOptions {
  tool: string;
  env: string;
  fromFile?: string;
}

const secretTarget = (command: Command): Command =>
  command
    .requiredOption('--tool <id>', 'the tool this secret belongs to (only that tool can use it)')
    .option('--env <environment>', 'environment', 'default');

secretTarget(
  secrets
    .command('set <name>')
    .description('create a secret for a tool; the value is read from stdin or --from-file'),
)
  .option('--from-file <path>', 'read the value from this file instead of stdin')
  .action((name: string, opts: SecretOptions) =>
    withToolgate(async (tg, out) => {
      const value = readSecretValue(opts.fromFile);
      const info = await tg.secrets.set(
        { toolId: opts.tool, name, environment: opts.env },
        value,
        actor,
      );
      out.result({ secret: info }, () => `set ${secretLine(info)}`);
    })(),
  );

secretTarget(
  secrets
    .command('rotate <name>')
    .description(
      'replace a secret with a new value (the next version); the old one is no longer used',
    ),
)
  .option('--from-file <path>', 'read the new value from this file instead of stdin')
  .action((name: string, opts: SecretOptions) =>
    withToolgate(async (tg, out) => {
      const value = readSecretValue(opts.fromFile);
      const info = await tg.secrets.rotate(
        { toolId: opts.tool, name, environment: opts.env },
        value,
        actor,
      );
      out.result({ secret: info }, () => `rotated ${secretLine(info)}`);
    })(),
  );

secretTarget(secrets.command('delete <name>').description('delete a secret')).action(
  (name: string, opts: SecretOptions) =>
    withToolgate(async (tg, out) => {
      const info = await tg.secrets.delete(
        { toolId: opts.tool, name, environment: opts.env },
        actor,
      );
      out.result({ deleted: info }, () => `deleted ${secretLine(info)}`);
    })(),
);

pageOptions(
  secrets
    .command('list')
    .description('list secrets: tool, name, environment, version, dates, key id (never values)')
    .option('--tool <id>', 'only this tool')
    .option('--env <environment>', 'only this environment'),
).action((opts: { tool?: string; env?: string } & PageFlags) =>
  withToolgate(async (tg, out) => {
    const all = await tg.secrets.list({
      ...(opts.tool ? { toolId: opts.tool } : {}),
      ...(opts.env ? { environment: opts.env } : {}),
    });
    const page = pageOf('secrets', all, (x) => [x.tool_id, x.name, x.environment], 'asc', opts);
    const list = page.items;
    out.result({ secrets: list, next_cursor: page.next_cursor }, () =>
      withNextCursor(
        list.length === 0
          ? 'no secrets'
          : table([
              ['TOOL', 'NAME', 'ENV', 'VERSION', 'CREATED', 'ROTATED', 'KEY ID'],
              ...list.map((s) => [
                s.tool_id,
                s.name,
                s.environment,
                String(s.version),
                s.created_at,
                s.rotated_at ?? '-',
                s.key_id,
              ]),
            ]),
        page.next_cursor,
      ),
    );
  })(),
);

program
  .command('reports <name>')
  .description(
    'governance reports: capability-register, access-matrix, invocations, deprecation-impact, orphaned-tools',
  )
  .addOption(
    new Option('--format <format>', 'output format').choices(['json', 'csv', 'md']).default('json'),
  )
  .option('--from <date>', 'start of the period (ISO-8601; default 30 days before --to)')
  .option('--to <date>', 'end of the period (ISO-8601; default now)')
  .action((name: string, opts: { format: string; from?: string; to?: string }) =>
    withToolgate(async (tg) => {
      const { body } = await tg.reports.render({
        name,
        format: opts.format,
        ...(opts.from !== undefined ? { from: opts.from } : {}),
        ...(opts.to !== undefined ? { to: opts.to } : {}),
      });
      // The report itself, in the format asked for, whatever --json says.
      process.stdout.write(body);
    })(),
  );

program
  .command('doctor')
  .description('check which sandbox drivers work on this host (runs `true` in each)')
  .action(async () => {
    const out = makeOutput(program.opts<GlobalOptions>().json === true);
    try {
      const drivers = await new SandboxService().doctor();
      out.result({ drivers }, () =>
        drivers
          .map((d) =>
            [
              `${d.driver.padEnd(10)} ${d.available ? 'works' : 'MISSING'}  ${d.detail}`,
              ...(d.available ? [] : [`           to fix: ${d.install}`]),
              ...d.notes.map((n) => `           ${n}`),
            ].join('\n'),
          )
          .join('\n'),
      );
    } catch (err) {
      process.exitCode = reportError(err, out.json);
    }
  });

const audit = program
  .command('audit')
  .description('the tamper-evident audit log: verify, checkpoint, export');

function printVerify(out: Output, report: VerifyReport, where: string): void {
  out.result(report, () => {
    const p = report.firstProblem;
    const head = report.ok
      ? `ok: ${where}: ${report.records} records chain, ${report.checkpoints} checkpoints verify (signed up to ${report.signedSize}, ${report.unsignedRecords} after the last checkpoint)`
      : `FAILED: ${where}: ${p?.seq !== null && p?.seq !== undefined ? `record ${p.seq}: ` : ''}${p?.message ?? ''}`;
    const more = report.problems.slice(1).map((q) => `  also: ${q.message}`);
    return [head, ...more].join('\n');
  });
  if (!report.ok) process.exitCode = 1;
}

audit
  .command('verify')
  .description(
    'recompute the chain, the Merkle tree and every checkpoint; name the first bad record',
  )
  .option('--bundle <dir>', 'check an exported bundle offline (no database)')
  .option('--key <file>', 'the trusted verifier key (NAME+ID+KEY); default: the data folder key')
  .action(async (opts: { bundle?: string; key?: string }) => {
    const globals = program.opts<GlobalOptions>();
    const out = makeOutput(globals.json === true);
    if (opts.bundle !== undefined) {
      try {
        const key = opts.key !== undefined ? readInput(opts.key) : undefined;
        const report = verifyBundle(opts.bundle, key !== undefined ? { key } : {});
        printVerify(out, report, `bundle ${opts.bundle} (records ${report.from}..${report.to})`);
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
      return;
    }
    if (opts.key === undefined && !existsSync(join(globals.dataDir, 'audit-signing-key.pem'))) {
      process.exitCode = reportError(
        new TypeError(
          `no audit key in ${globals.dataDir}: pass --data-dir, or --key with the verifier key you trust`,
        ),
        out.json,
      );
      return;
    }
    await withToolgate(
      async (tg) => {
        const keys = opts.key !== undefined ? [readInput(opts.key)] : undefined;
        const report = await tg.audit.verify(keys ? { keys } : {});
        printVerify(out, report, tg.store.location);
      },
      { audit: { checkpoints: false } },
      // Damage found while opening (before any record is read) is still a verification finding.
      (err, out) => {
        if (!isStoreCorrupt(err)) return false;
        const verifier = new LogVerifier({ verifiers: [] }, []);
        verifier.storeCorrupt(
          err instanceof Error
            ? `${String((err as { code?: unknown }).code)}: ${err.message}`
            : 'unreadable',
        );
        printVerify(out, verifier.finish(), globals.db ?? 'the database');
        return true;
      },
    )();
  });

audit
  .command('checkpoint')
  .description('sign a checkpoint of the log as it stands now')
  .action(() =>
    withToolgate(
      async (tg, out) => {
        const cp = await tg.audit.checkpoint();
        out.result(cp, () => cp?.note ?? 'the log is empty');
      },
      { audit: { checkpoints: true, checkpointIntervalMs: 0 } },
    )(),
  );

audit
  .command('export')
  .description('write records, checkpoints and the public key for offline verification')
  .requiredOption('--out <dir>', 'bundle folder')
  .addOption(new Option('--from <seq>', 'first record').argParser(int(1, Number.MAX_SAFE_INTEGER)))
  .addOption(new Option('--to <seq>', 'last record').argParser(int(1, Number.MAX_SAFE_INTEGER)))
  .action((opts: { out: string; from?: number; to?: number }) =>
    withToolgate(
      async (tg, out) => {
        const result = await tg.audit.exportBundle(opts.out, {
          ...(opts.from !== undefined ? { from: opts.from } : {}),
          ...(opts.to !== undefined ? { to: opts.to } : {}),
        });
        out.result(
          { ...result, out: opts.out },
          () =>
            `exported records ${result.from}..${result.to} (${result.records}) to ${opts.out}, covered by the checkpoint at ${result.checkpoint}`,
        );
      },
      { audit: { checkpoints: true, checkpointIntervalMs: 0 } },
    )(),
  );

// Usage errors (unknown option, bad number, missing --reason) are refusals like any other: with
// --json they are printed as { error: { code: 'INPUT_INVALID', … } }.
// Upstream MCP providers (issue 5): register with `apply -f` (kind: Provider); here they are
// listed, refreshed (rug-pull check) and their imported tools classified.
const providers = program
  .command('providers')
  .description('upstream MCP providers: list, show, refresh, classify their tools');

pageOptions(providers.command('list')).action((opts: PageFlags) =>
  withToolgate(async (tg, out) => {
    const page = pageOf('providers', await tg.providers.list(), (p) => [p.name], 'asc', opts);
    const list = page.items;
    out.result({ providers: list, next_cursor: page.next_cursor }, () =>
      withNextCursor(
        list.length === 0
          ? 'no providers'
          : table([
              ['NAME', 'ISOLATION', 'CLASSIFIED', 'UNCLASSIFIED', 'QUARANTINED', 'REFRESHED'],
              ...list.map((p) => [
                p.name,
                p.isolation,
                String(p.tools.classified),
                String(p.tools.unclassified),
                String(p.tools.quarantined + p.tools.removed),
                p.refreshed_at ?? 'never',
              ]),
            ]),
        page.next_cursor,
      ),
    );
  })(),
);

providers
  .command('show <name>')
  .description("a provider's spec and every imported tool with its pin and state")
  .action((name: string) =>
    withToolgate(async (tg, out) => {
      const p = await tg.providers.show(name);
      out.result(p, () =>
        [
          `${p.name}  ${p.transport} in ${p.isolation}; owner ${p.owner}; refreshed ${p.refreshed_at ?? 'never'}`,
          `  ${p.spec.command ? `command: ${p.spec.command.join(' ')}` : `url: ${p.spec.url ?? ''}`}`,
          table([
            ['TOOL', 'STATE', 'CATALOG', 'PIN', 'FINDINGS'],
            ...p.tools.map((t) => [
              t.name,
              t.reason ? `${t.state} (${t.reason})` : t.state,
              t.tool_version ? `${t.tool_id}@${t.tool_version}` : t.tool_id,
              t.pin_hash.slice(0, 19),
              String(t.findings.length),
            ]),
          ]),
        ].join('\n'),
      );
    })(),
  );

providers
  .command('refresh <name>')
  .description('list the provider again: changed, added or dropped tools are quarantined')
  .action((name: string) =>
    withToolgate(async (tg, out) => {
      const r = await tg.providers.refresh(name, actor);
      out.result(r, () =>
        [
          `imported ${r.imported.length}, unchanged ${r.unchanged.length}`,
          ...(r.changed.length > 0 ? [`QUARANTINED (changed): ${r.changed.join(', ')}`] : []),
          ...(r.added.length > 0 ? [`QUARANTINED (added): ${r.added.join(', ')}`] : []),
          ...(r.removed.length > 0 ? [`QUARANTINED (removed): ${r.removed.join(', ')}`] : []),
          ...(r.skipped.length > 0 ? [`skipped (names): ${r.skipped.join(', ')}`] : []),
        ].join('\n'),
      );
    })(),
  );

providers
  .command('classify <name> <tool>')
  .description('classify an imported tool so it can be offered (registers provider.tool)')
  .requiredOption('-f, --file <path>', 'classification as YAML or JSON, - for stdin')
  .action((name: string, tool: string, opts: { file: string }) =>
    withToolgate(async (tg, out) => {
      let classification: unknown;
      try {
        classification = parseYaml(readInput(opts.file));
      } catch (err) {
        throw new ToolgateError('INPUT_MALFORMED', 'the classification is not YAML or JSON', {
          reason: err instanceof Error ? err.message : 'unparseable',
        });
      }
      const r = await tg.providers.classify(name, tool, classification, actor);
      out.result(r, () =>
        [
          describeVersion(r.tool),
          ...(r.changeId ? [`awaiting approvers: ${r.changeId}`] : []),
        ].join('\n'),
      );
    })(),
  );

const wantsJson = process.argv.includes('--json');
const configure = (command: Command): void => {
  command.exitOverride();
  command.configureOutput({
    writeErr: (text) => {
      if (!wantsJson) process.stderr.write(text);
    },
  });
  for (const sub of command.commands) configure(sub);
};
configure(program);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  const code = (err as { code?: string }).code ?? '';
  if (
    code === 'commander.helpDisplayed' ||
    code === 'commander.version' ||
    code === 'commander.help'
  ) {
    process.exitCode = 0;
  } else if (code.startsWith('commander.')) {
    const message = err instanceof Error ? err.message.replace(/^error: /, '') : String(err);
    if (wantsJson) {
      process.stdout.write(
        `${JSON.stringify({ error: { code: 'INPUT_INVALID', message, details: { problems: [] } } }, null, 2)}\n`,
      );
    }
    process.exitCode = 1;
  } else {
    process.exitCode = reportError(err, wantsJson);
  }
}
