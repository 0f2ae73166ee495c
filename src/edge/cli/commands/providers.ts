/**
 * @module `toolgate providers`: upstream MCP providers: list, show, refresh, classify their tools,
 * resources, resource templates and prompts.
 */

import type { Command } from 'commander';
import { pageOf, parseFileText, ToolgateError } from '../../../core/index.js';
import { operatorActor } from '../../../domain/operators/index.js';
import { MAX_CONFIG_BYTES } from '../../../operations/config/index.js';
import {
  describeVersion,
  type PageFlags,
  pageOptions,
  readInput,
  withAdmin,
} from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

export function registerProviders(program: Command): void {
  // Upstream MCP providers: register with `apply -f` (kind: Provider); here they are
  // listed, refreshed (rug-pull check) and their imported tools classified.
  const providers = program
    .command('providers')
    .description('upstream MCP providers: list, show, refresh, classify their tools and entries');

  pageOptions(providers.command('list')).action((opts: PageFlags) =>
    withAdmin(
      program,
      async (admin, out) => {
        const page = pageOf(
          'providers',
          await admin.providers.list(),
          (p) => [p.name],
          'asc',
          opts,
        );
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
      },
      { action: 'state.read' },
    )(),
  );

  providers
    .command('show <name>')
    .description("a provider's spec and every imported tool with its pin and state")
    .action((name: string) =>
      withAdmin(
        program,
        async (admin, out) => {
          const p = await admin.providers.show(name);
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
              ...(p.entries.length > 0
                ? [
                    table([
                      ['ENTRY', 'KEY', 'STATE', 'CATALOG', 'FINDINGS'],
                      ...p.entries.map((e) => [
                        e.kind,
                        e.key,
                        e.reason ? `${e.state} (${e.reason})` : e.state,
                        e.tool_version ? `${e.tool_id}@${e.tool_version}` : e.tool_id,
                        String(e.findings.length),
                      ]),
                    ]),
                  ]
                : []),
            ].join('\n'),
          );
        },
        { action: 'state.read' },
      )(),
    );

  providers
    .command('refresh <name>')
    .description('list the provider again: changed, added or dropped tools are quarantined')
    .action((name: string) =>
      withAdmin(program, async (admin, out, operator) => {
        const r = await admin.providers.refresh(name, operatorActor(operator, 'cli'));
        out.result(r, () =>
          [
            `imported ${r.imported.length}, unchanged ${r.unchanged.length}`,
            ...(r.changed.length > 0 ? [`QUARANTINED (changed): ${r.changed.join(', ')}`] : []),
            ...(r.listed_again.length > 0
              ? [`QUARANTINED (listed again): ${r.listed_again.join(', ')}`]
              : []),
            ...(r.added.length > 0 ? [`QUARANTINED (added): ${r.added.join(', ')}`] : []),
            ...(r.removed.length > 0 ? [`QUARANTINED (removed): ${r.removed.join(', ')}`] : []),
            ...skippedLines(r),
            `entries: imported ${r.entries.imported.length}, unchanged ${r.entries.unchanged.length}`,
            ...quarantinedEntries(r.entries),
          ].join('\n'),
        );
      })(),
    );

  providers
    .command('classify <name> <tool>')
    .description('classify an imported tool so it can be offered (registers provider.tool)')
    .requiredOption('-f, --file <path>', 'classification as YAML or JSON, - for stdin')
    .action((name: string, tool: string, opts: { file: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const classification = readClassification(opts.file);
        const r = await admin.providers.classify(
          name,
          tool,
          classification,
          operatorActor(operator, 'cli'),
        );
        out.result(r, () => describeClassified(r));
      })(),
    );

  providers
    .command('classify-entry <name> <kind> <key>')
    .description(
      'classify an imported resource, resource_template or prompt (key: its URI, URI template or name) so it can be offered',
    )
    .requiredOption('-f, --file <path>', 'classification as YAML or JSON, - for stdin')
    .action((name: string, kind: string, key: string, opts: { file: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const classification = readClassification(opts.file);
        const r = await admin.providers.classifyEntry(
          name,
          kind,
          key,
          classification,
          operatorActor(operator, 'cli'),
        );
        out.result(r, () => describeClassified(r));
      })(),
    );
}

/** A classification file (YAML or JSON, `-` for stdin); INPUT_MALFORMED when it does not parse. */
function readClassification(file: string): unknown {
  // A file that is not a regular one, unreadable or too large: INPUT_INVALID naming -f.
  const text = readInput(file, '-f', MAX_CONFIG_BYTES);
  try {
    // Named by kind, line and column, never by its text (attack round 22, Y1).
    return parseFileText(text, `-f ${file}`);
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'cannot be parsed';
    throw new ToolgateError(
      'INPUT_MALFORMED',
      `the classification is not YAML or JSON: ${reason}`,
      {
        reason,
      },
    );
  }
}

/** What a classification registered, and what it still waits for. */
function describeClassified(r: {
  tool: Parameters<typeof describeVersion>[0];
  changeId?: string;
  review?: { readonly id: string; readonly reasons: readonly string[] };
}): string {
  return [
    describeVersion(r.tool),
    ...(r.review
      ? [`awaiting security review: ${r.review.id} (${r.review.reasons.join(', ')})`]
      : []),
    ...(r.changeId ? [`awaiting approvers: ${r.changeId}`] : []),
  ].join('\n');
}

type Skipped = readonly { readonly name: string; readonly reason: string }[];

/** Each listed tool or prompt a refresh did not import, with why. */
function skippedLines(r: {
  readonly skipped_reasons: Skipped;
  readonly entries: { readonly skipped: Skipped; readonly skipped_more?: number };
}): string[] {
  const more = r.entries.skipped_more ?? 0;
  return [
    ...[...r.skipped_reasons, ...r.entries.skipped].map((x) => `skipped ${x.name}: ${x.reason}`),
    ...(more > 0 ? [`skipped ${more} more entries past the listing's caps`] : []),
  ];
}

/** The entries a refresh quarantined (changed, listed again, added, removed), on one line. */
function quarantinedEntries(e: {
  readonly changed: readonly string[];
  readonly listed_again: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
}): string[] {
  const all = [...e.changed, ...e.listed_again, ...e.added, ...e.removed];
  return all.length > 0 ? [`QUARANTINED entries: ${all.join(', ')}`] : [];
}
