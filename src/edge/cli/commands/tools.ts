/**
 * @module `toolgate tools`: the tool catalog: list, show, search, lifecycle, quarantine, health,
 * code hash.
 */
import { type Command, Option } from 'commander';
import { codeHash } from '../../../api/index.js';
import { pageOf } from '../../../core/index.js';
import { operatorActor } from '../../../domain/operators/index.js';
import {
  describeVersions,
  describeWithDefinition,
  type GlobalOptions,
  int,
  type PageFlags,
  pageOptions,
  parseRef,
  refuseStatedApprover,
  versionLine,
  withAdmin,
} from '../command-kit.js';
import { makeOutput, reportError, table, withNextCursor } from '../output.js';

export function registerTools(program: Command): void {
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
      withAdmin(
        program,
        async (admin, out) => {
          const all = await admin.catalog.list({
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
        },
        { action: 'state.read' },
      )(),
  );

  tools
    .command('show <ref>')
    .description('show a tool (all versions) or one version: ID or ID@VERSION')
    .action((ref: string) =>
      withAdmin(
        program,
        async (admin, out) => {
          if (ref.includes('@')) {
            const { id, version } = parseRef(ref);
            const t = await admin.catalog.get(id, version);
            out.result(t, () => describeWithDefinition(t));
          } else {
            const versions = await admin.catalog.versions(ref);
            out.result({ id: ref, versions }, () => describeVersions(versions));
          }
        },
        { action: 'state.read' },
      )(),
    );

  tools
    .command('search [query]')
    .description('search offered tools by text and tags (as agents discover them)')
    .option('--tags <list>', 'comma-separated tags that must all match')
    .addOption(new Option('--limit <n>', 'most results').default(20).argParser(int(1, 100)))
    .action((query: string | undefined, opts: { tags?: string; limit: number }) =>
      withAdmin(
        program,
        async (admin, out) => {
          const results = await admin.discovery.search({
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
        },
        { action: 'state.read' },
      )(),
    );

  tools
    .command('activate <ref>')
    .description('activate a draft, or undo a deprecation')
    .action((ref: string) =>
      withAdmin(program, async (admin, out, operator) => {
        const { id, version } = parseRef(ref);
        const t = await admin.catalog.activate(id, version, operatorActor(operator, 'cli'));
        out.result(t, () => `${id}@${version} is ${t.lifecycle}`);
      })(),
    );

  tools
    .command('review <id> <version>')
    .description(
      "record an approver's security review of this version's definition (restricted, privileged, third-party tools)",
    )
    .addOption(
      new Option('--decision <decision>', 'approved or rejected')
        .choices(['approved', 'rejected'])
        .makeOptionMandatory(),
    )
    .requiredOption('--hash <sha256>', 'the definition hash you reviewed (tools show prints it)')
    .requiredOption('--notes <text>', 'what you checked, or why you reject it')
    .addOption(new Option('--approver <id>').hideHelp())
    .option(
      '--totp <code>',
      'your second factor: needed to approve a restricted, privileged or third-party tool (where the organisation requires passkeys, approve in the console or over REST with your passkey)',
    )
    .action(
      (
        id: string,
        version: string,
        opts: {
          decision: 'approved' | 'rejected';
          hash: string;
          notes: string;
          approver?: string;
          totp?: string;
        },
      ) =>
        withAdmin(
          program,
          async (admin, out, operator) => {
            // The reviewer is the operator this run authenticated as (TOOLGATE_TOKEN), never a
            // name the command states.
            refuseStatedApprover(opts);
            const r = await admin.catalog.review(
              id,
              version,
              operator,
              { definition_hash: opts.hash, decision: opts.decision, notes: opts.notes },
              { via: 'cli', ...(opts.totp !== undefined ? { totp: opts.totp } : {}) },
            );
            out.result(r, () =>
              [
                `${id}@${version}: review ${r.review.status} by ${r.review.reviewer} (${r.review.definition_hash})`,
                `  lifecycle: ${r.tool.lifecycle}${r.changeId ? `, awaiting approvers: ${r.changeId}` : ''}`,
              ].join('\n'),
            );
          },
          { action: 'approvals.decide' },
        )(),
    );

  pageOptions(
    tools
      .command('reviews')
      .description('security reviews, newest registration first')
      .option('--pending', 'only the queue: drafts waiting for a review')
      .addOption(new Option('--status <status>').choices(['pending', 'approved', 'rejected'])),
  ).action(
    (opts: { pending?: boolean; status?: 'pending' | 'approved' | 'rejected' } & PageFlags) =>
      withAdmin(
        program,
        async (admin, out) => {
          const status = opts.pending ? 'pending' : opts.status;
          const page = await admin.reviews.page(status, {
            limit: opts.limit,
            ...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}),
          });
          out.result({ reviews: page.items, next_cursor: page.next_cursor }, () =>
            withNextCursor(
              page.items.length === 0
                ? 'no reviews'
                : table([
                    ['ID', 'VERSION', 'STATUS', 'TIER', 'WHY', 'REGISTERED BY', 'REVIEWER', 'HASH'],
                    ...page.items.map((r) => [
                      r.tool_id,
                      r.version,
                      r.status,
                      r.access_tier,
                      r.reasons.join(','),
                      r.registered_by,
                      r.reviewer ?? '-',
                      r.definition_hash,
                    ]),
                  ]),
              page.next_cursor,
            ),
          );
        },
        { action: 'approvals.read' },
      )(),
  );

  tools
    .command('deprecate <ref>')
    .description('deprecate a version; it retires when the migration window ends')
    .addOption(
      new Option('--window <days>', 'migration window in days').default(30).argParser(int(0, 3650)),
    )
    .option('--reason <text>')
    .action((ref: string, opts: { window: number; reason?: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const { id, version } = parseRef(ref);
        const t = await admin.catalog.deprecate(id, version, operatorActor(operator, 'cli'), {
          windowDays: opts.window,
          ...(opts.reason ? { reason: opts.reason } : {}),
        });
        out.result(t, () => `${id}@${version} is deprecated; retires ${t.retire_at}`);
      })(),
    );

  tools
    .command('extend <ref>')
    .description("extend a deprecated version's migration window (audited)")
    .requiredOption('--days <days>', 'days to add to the window', int(1, 3650))
    .option('--reason <text>')
    .action((ref: string, opts: { days: number; reason?: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const { id, version } = parseRef(ref);
        const t = await admin.catalog.extendDeprecation(
          id,
          version,
          operatorActor(operator, 'cli'),
          {
            days: opts.days,
            ...(opts.reason ? { reason: opts.reason } : {}),
          },
        );
        out.result(t, () => `${id}@${version} stays deprecated; retires ${t.retire_at}`);
      })(),
    );

  tools
    .command('retire <ref>')
    .description('retire a version now')
    .option('--reason <text>')
    .action((ref: string, opts: { reason?: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const { id, version } = parseRef(ref);
        const t = await admin.catalog.retire(
          id,
          version,
          operatorActor(operator, 'cli'),
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
        withAdmin(program, async (admin, out, operator) => {
          const { id, version } = parseRef(ref);
          const t = await admin.catalog[op](
            id,
            version,
            operatorActor(operator, 'cli'),
            opts.reason,
          );
          out.result(
            t,
            () =>
              `${id}@${version} is ${t.quarantined ? 'quarantined' : 'released from quarantine'}`,
          );
        })(),
      );
  }

  // Tool health (C14). The monitor's live state is in `serve` (GET /v1/health/tools); here a
  // probe runs once in this process, and overrides go to the store every replica follows.
  const health = tools.command('health').description('tool health: probe, override, clear');
  health
    .command('probe <ref>')
    .description("run a tool version's probe once, here, and show the outcome")
    .action((ref: string) =>
      withAdmin(program, async (admin, out) => {
        const { id, version } = parseRef(ref);
        const s = await admin.toolHealth.probeNow(id, version);
        out.result(s, () =>
          s.probe === null
            ? `${id}@${version} has no probe (its health comes from live calls)`
            : `${id}@${version}: ${s.state} (score ${s.score}), probe ${s.probe} ${s.last_probe_ok ? 'ok' : `failed: ${s.last_rule}`} in ${s.last_latency_ms} ms`,
        );
      })(),
    );
  health
    .command('override <ref>')
    .description("override a tool version's health state until a time (recorded)")
    .addOption(
      new Option('--state <state>', 'the state to hold')
        .choices(['healthy', 'degraded', 'unavailable'])
        .makeOptionMandatory(),
    )
    .requiredOption('--reason <text>', 'why (recorded in the event log)')
    .requiredOption('--until <time>', 'when the override ends (ISO 8601)')
    .action((ref: string, opts: { state: string; reason: string; until: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const { id, version } = parseRef(ref);
        const view = await admin.toolHealth.setOverride(
          id,
          version,
          { state: opts.state, reason: opts.reason, expires_at: opts.until },
          operatorActor(operator, 'cli'),
        );
        out.result(view, () => `${id}@${version} is held ${view.state} until ${opts.until}`);
      })(),
    );
  health
    .command('clear <ref>')
    .description("clear a tool version's health override (recorded)")
    .option('--reason <text>', 'why (recorded in the event log)', 'cleared')
    .action((ref: string, opts: { reason: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const { id, version } = parseRef(ref);
        const view = await admin.toolHealth.clearOverride(
          id,
          version,
          operatorActor(operator, 'cli'),
          opts.reason,
        );
        out.result(view, () => `${id}@${version}: override cleared (${view.state})`);
      })(),
    );

  tools
    .command('hash <argv...>')
    .description(
      "print the code_hash of a command tool's argv (the files it names by absolute path), e.g. `tools hash -- node /srv/tools/x.mjs`",
    )
    .action((argv: string[]) => {
      const out = makeOutput(program.opts<GlobalOptions>().json === true);
      try {
        const { code_hash, files } = codeHash(argv);
        out.result({ code_hash, files }, () =>
          [code_hash, ...files.map((f) => `  covers ${f}`)].join('\n'),
        );
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
    });
}
