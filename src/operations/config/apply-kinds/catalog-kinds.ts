/**
 * @module `apply -f` of Tool, Policy and Provider documents (C18): tools registered oldest version
 * first, so each is compared with its predecessor from the same file; policies checked as the
 * whole set they will form before any is written; providers saved in the transaction and listed
 * (their tools imported) only after the commit.
 */
import semver from 'semver';
import { type Actor, problem, ToolgateError } from '../../../core/index.js';
import type { CatalogService, ToolDefinition } from '../../../domain/catalog/index.js';
import type { PolicyService, PolicySpec } from '../../../domain/policy/index.js';
import type { ProviderService, ProviderSpec } from '../../../execution/providers/index.js';
import { EventBatch } from '../../../records/store/index.js';
import {
  type ApplyChange,
  type ApplyResult,
  actionOf,
  type ConfigProblem,
  type IndexedDocument,
  type KindContext,
  type KindOutcome,
} from '../apply-types.js';
import { refusalProblems } from '../config-problems.js';

export async function applyTools(
  { ctx, actor, options }: KindContext,
  docs: readonly IndexedDocument[],
  catalog: CatalogService,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  const problems: ConfigProblem[] = [];
  const tools = [...docs].sort((a, b) => {
    const x = a.doc.spec as ToolDefinition;
    const y = b.doc.spec as ToolDefinition;
    return x.id.localeCompare(y.id) || semver.compare(x.version, y.version);
  });
  // The file's registration events are appended together, in order, when its tools are done
  // (one statement per batch, not four per tool: docs/architecture.md §8, C3, "Bulk registration").
  const events = new EventBatch();
  for (const { index, doc } of tools) {
    const spec = doc.spec as ToolDefinition;
    try {
      const { outcome, tool, changeId, review } = await catalog.registerIn(ctx, spec, actor, {
        ...(options.operator ? { operator: options.operator } : {}),
        events,
      });
      changes.push({
        document: index,
        kind: 'Tool',
        subject: `tool ${spec.id}@${spec.version}`,
        action: outcome === 'created' ? 'create' : 'unchanged',
        summary:
          outcome === 'unchanged'
            ? 'unchanged'
            : tool.quarantined
              ? `registered, QUARANTINED: ${tool.findings.map((f) => f.message).join('; ')}`
              : `registered (${tool.lifecycle}, ${tool.action_class}, ${tool.access_tier})${review ? `, awaiting security review: ${review.id} (${review.reasons.join(', ')})` : ''}${changeId ? `, awaiting approvers: ${changeId}` : ''}`,
        quarantined: tool.quarantined,
      });
    } catch (err) {
      problems.push(...refusalProblems(err, index, 'Tool'));
    }
  }
  await events.flush(ctx.trx);
  return { changes, problems };
}

/**
 * Policies are validated as the whole set they will form, then written; a change bumps the
 * catalog revision so every gate reloads them.
 */
export async function applyPolicies(
  { ctx, actor }: KindContext,
  docs: readonly IndexedDocument[],
  policies: PolicyService,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  const problems: ConfigProblem[] = [];
  if (docs.length === 0) return { changes, problems };
  const found = await policies.check(
    ctx.trx,
    docs.map((d) => d.doc.spec as PolicySpec),
  );
  for (const p of found) {
    const at = docs.find((d) => (d.doc.spec as PolicySpec).id === p.source);
    problems.push({
      ...problem(`/${at?.index ?? 0}/spec/text`, p.message, 'policy.cedar'),
      document: at?.index ?? 0,
      kind: 'Policy',
    });
  }
  if (found.length > 0) return { changes, problems };
  for (const { index, doc } of docs) {
    const spec = doc.spec as PolicySpec;
    const outcome = await policies.upsertIn(ctx.trx, spec, actor);
    if (outcome !== 'unchanged') ctx.changed = true;
    changes.push({
      document: index,
      kind: 'Policy',
      subject: `policy ${spec.id}`,
      action: actionOf(outcome),
      summary: outcome,
    });
  }
  return { changes, problems };
}

export async function applyProviders(
  { ctx, actor }: KindContext,
  docs: readonly IndexedDocument[],
  providers: ProviderService | null,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  const problems: ConfigProblem[] = [];
  for (const { index, doc } of docs) {
    const spec = doc.spec as ProviderSpec;
    if (!providers) {
      problems.push({
        ...problem(`/${index}/kind`, 'providers are not available here', 'config.kind'),
        document: index,
        kind: 'Provider',
      });
      continue;
    }
    const action = await providers.saveIn(ctx, spec, actor);
    changes.push({
      document: index,
      kind: 'Provider',
      subject: `provider ${spec.name}`,
      action,
      summary:
        action === 'unchanged'
          ? 'unchanged'
          : `${action === 'create' ? 'registered' : 'updated'} (${spec.isolation ?? 'namespace'})`,
    });
  }
  return { changes, problems };
}

/**
 * Registered or changed providers are listed and their tools imported after the commit: an
 * upstream process is never started inside the configuration's transaction. A provider that
 * cannot be listed stays registered, with the reason in its change summary.
 */
export async function importProviders(
  result: ApplyResult,
  actor: Actor,
  providers: ProviderService | null,
): Promise<ApplyResult> {
  if (
    !providers ||
    !result.changes.some((c) => c.kind === 'Provider' && c.action !== 'unchanged')
  ) {
    return result;
  }
  const changes: ApplyChange[] = [];
  for (const change of result.changes) {
    if (change.kind !== 'Provider' || change.action === 'unchanged') {
      changes.push(change);
      continue;
    }
    const name = change.subject.replace(/^provider /, '');
    try {
      const r = await providers.refresh(name, actor);
      const n = r.imported.length + r.added.length;
      const entries = r.entries.imported.length + r.entries.added.length;
      const changed = [
        ...r.changed,
        ...r.listed_again,
        ...r.entries.changed,
        ...r.entries.listed_again,
      ];
      changes.push({
        ...change,
        summary: `${change.summary}; ${n} tools imported, unclassified until classified${entries > 0 ? `; ${entries} resources or prompts too` : ''}${changed.length > 0 ? `; QUARANTINED (changed or listed again): ${changed.join(', ')}` : ''}`,
      });
    } catch (err) {
      const code = err instanceof ToolgateError ? err.code : 'INTERNAL';
      changes.push({
        ...change,
        summary: `${change.summary}; tools not imported (${code}): run toolgate providers refresh ${name}`,
      });
    }
  }
  return { ...result, changes };
}
