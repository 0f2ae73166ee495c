/**
 * @module `apply --prune` (C18, docs/architecture.md §2): what a named configuration set declared
 * before and its files no longer declare. Each set keeps a ledger (`applied_objects`) of what it
 * declared; an apply compares the ledger with the files. Without `--prune` every undeclared object
 * is listed as drift and kept; with it, grants are revoked, agents and users disabled, tool
 * versions withdrawn through their lifecycle, policies deleted and destination sets no live tool
 * names deleted, owner channels removed, operator accounts disabled, each as an audited event in the apply's own transaction. Nothing made by other
 * means, or still declared by another set, is touched. Providers are listed but never removed
 * (there is no removal for them yet); an object a rule keeps (a destination set a tool still
 * names) is listed as drift with the reason and stays in the ledger.
 */

import type { Actor } from '../../core/index.js';
import { problem, ToolgateError } from '../../core/index.js';
import {
  type CatalogService,
  type CatalogWrite,
  DEFAULT_MIGRATION_WINDOW_DAYS,
  effectiveLifecycleOf,
  type LifecycleState,
  type ToolDefinition,
} from '../../domain/catalog/index.js';
import type { ChangeDesk } from '../../domain/decisions/index.js';
import type {
  AgentService,
  AgentSpec,
  GrantSpec,
  UserService,
  UserSpec,
} from '../../domain/identity/index.js';
import type { Operator, OperatorDocument, OperatorService } from '../../domain/operators/index.js';
import type {
  DestinationSetDocument,
  DestinationSets,
  PolicyService,
  PolicySpec,
} from '../../domain/policy/index.js';
import type { ProviderSpec } from '../../execution/providers/index.js';
import type { OwnerChannelDocument, OwnerChannels } from '../owners/index.js';
import { destinationSetKept, pruneDestinationSet } from './apply-kinds/destination-set-kind.js';
import { operatorKept, pruneOperator } from './apply-kinds/operator-kind.js';
import { pruneOwnerChannel } from './apply-kinds/owner-channel-kind.js';
import type { PruneOutcome } from './apply-kinds/prune-outcome.js';
import type { ConfigProblem, IndexedDocument } from './apply-types.js';
import type { ConfigDocument } from './config-document.js';

/** A set's name: short, lowercase, safe in a URL and a log line. */
export const APPLY_SET_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const DEFAULT_APPLY_SET = 'default';

/** One object of the ledger: its kind and its key within the kind. */
interface Declared {
  readonly kind: ConfigDocument['kind'];
  readonly subject: string;
}

export interface PruneChange {
  readonly document: -1;
  readonly kind: ConfigDocument['kind'];
  readonly subject: string;
  readonly action: 'prune' | 'drift';
  readonly summary: string;
  /** On drift: whether `--prune` removes it (true) or a rule or another set keeps it (false). */
  readonly prunable?: boolean;
}

export interface PruneServices {
  readonly catalog: CatalogService;
  readonly agents: AgentService;
  readonly users: UserService;
  readonly policies: PolicyService;
  readonly changes: Pick<ChangeDesk, 'pendingGrantIn' | 'withdrawGrantIn'>;
  readonly destinationSets: DestinationSets;
  readonly operators: OperatorService;
  readonly ownerChannels: OwnerChannels;
  /** The person applying; without one an account no longer declared is kept. */
  readonly operator: Operator | undefined;
}

const REASON = 'no longer declared (apply --prune)';

/** The ledger keys of the documents an apply declares. */
export function declaredObjects(docs: readonly { doc: ConfigDocument }[]): Declared[] {
  const out: Declared[] = [];
  for (const { doc } of docs) {
    switch (doc.kind) {
      case 'Agent':
        out.push({ kind: 'Agent', subject: (doc.spec as AgentSpec).id });
        break;
      case 'User':
        out.push({ kind: 'User', subject: (doc.spec as UserSpec).id });
        break;
      case 'Tool': {
        const spec = doc.spec as ToolDefinition;
        out.push({ kind: 'Tool', subject: `${spec.id}@${spec.version}` });
        break;
      }
      case 'Policy':
        out.push({ kind: 'Policy', subject: (doc.spec as PolicySpec).id });
        break;
      case 'Grant': {
        const spec = doc.spec as GrantSpec;
        for (const c of spec.capabilities)
          out.push({ kind: 'Grant', subject: `${spec.agent} ${c}` });
        break;
      }
      case 'Provider':
        out.push({ kind: 'Provider', subject: (doc.spec as ProviderSpec).name });
        break;
      case 'DestinationSet':
        out.push({ kind: 'DestinationSet', subject: (doc.spec as DestinationSetDocument).name });
        break;
      case 'Operator':
        out.push({ kind: 'Operator', subject: (doc.spec as OperatorDocument).id });
        break;
      case 'OwnerChannel': {
        const spec = doc.spec as OwnerChannelDocument;
        out.push({ kind: 'OwnerChannel', subject: `${spec.team}/${spec.name}` });
        break;
      }
    }
  }
  return out;
}

/**
 * One object declared by two documents of one file (the same operator id, channel team/name, set
 * name, tool version, grant…): each later document is a problem naming both, so the file is
 * refused whole rather than applied twice, the last winning (attack round 22, Y2). A grant's
 * capabilities spread over documents are distinct objects; one listed twice in one document is
 * one object.
 */
export function declaredTwiceProblems(docs: readonly IndexedDocument[]): ConfigProblem[] {
  const first = new Map<string, number>();
  const problems: ConfigProblem[] = [];
  for (const d of docs) {
    const inThis = new Set<string>();
    for (const o of declaredObjects([d])) {
      const k = key(o);
      if (inThis.has(k)) continue;
      inThis.add(k);
      const at = first.get(k);
      if (at === undefined) {
        first.set(k, d.index);
        continue;
      }
      problems.push({
        ...problem(
          `/${d.index}`,
          `${subjectText(o)} is declared twice in this file, by documents /${at} and /${d.index}: declare it once`,
          'config.declared_twice',
        ),
        document: d.index,
        kind: d.doc.kind,
      });
    }
  }
  return problems;
}

/**
 * Records what the set declares now and, for what it declared before and no longer does, prunes
 * (with `prune`) or reports drift. Runs inside the apply's transaction: a dry run rolls it back
 * with everything else, so its plan is exactly what the apply would do.
 */
export async function reconcileSet(
  ctx: CatalogWrite,
  services: PruneServices,
  set: string,
  declared: readonly Declared[],
  actor: Actor,
  prune: boolean,
): Promise<{ changes: PruneChange[]; notes: Map<string, DeclarationNote> }> {
  const { trx } = ctx;
  const now = new Set(declared.map(key));
  const before = (await trx
    .selectFrom('applied_objects')
    .select(['kind', 'subject'])
    .where('set_name', '=', set)
    .execute()) as Declared[];
  const held = new Set(before.map(key));
  const at = new Date().toISOString();
  const added = [...new Map(declared.map((d) => [key(d), d])).values()].filter(
    (d) => !held.has(key(d)),
  );
  const notes = await declarationNotes(trx, set, declared, new Set(added.map(key)));
  // Five values a row, a hundred rows a statement: under every bound-parameter limit.
  for (let i = 0; i < added.length; i += 100) {
    await trx
      .insertInto('applied_objects')
      .values(
        added.slice(i, i + 100).map((d) => ({
          set_name: set,
          kind: d.kind,
          subject: d.subject,
          applied_at: at,
          applied_by: actor.id,
        })),
      )
      .execute();
  }
  // Destination sets last: a tool this prune retires no longer keeps the set it names.
  const last = (d: Declared) => (d.kind === 'DestinationSet' ? 1 : 0);
  const gone = before
    .filter((d) => !now.has(key(d)))
    .sort(
      (a, b) =>
        last(a) - last(b) || a.kind.localeCompare(b.kind) || a.subject.localeCompare(b.subject),
    );
  const changes: PruneChange[] = [];
  // Without --prune, the plan says what a prune would do: a draft it retires keeps no set.
  const others = await otherSets(trx, set, gone);
  const retiring = prune ? new Set<string>() : await draftsRetiredBy(trx, others, gone);
  for (const d of gone) {
    const drift = (summary: string, prunable: boolean) =>
      changes.push({
        document: -1,
        kind: d.kind,
        subject: subjectText(d),
        action: 'drift',
        summary,
        prunable,
      });
    if (d.kind === 'Provider') {
      drift('no longer declared: kept (providers are not pruned; remove it by hand)', false);
      continue;
    }
    // Another set that still declares the object keeps it; a prune releases it from this set.
    const other = others.get(key(d)) ?? null;
    if (other !== null) {
      const waiting = await pendingGrantText(trx, services, d, 'kept');
      if (prune) await release(trx, set, d);
      const leave = prune ? '' : ' (--prune leaves it to that set)';
      drift(
        `no longer declared here: kept, set ${other} still declares it${leave}${waiting}`,
        false,
      );
      continue;
    }
    if (!prune) {
      const kept = await keptByRule(trx, services, d, retiring);
      if (kept !== null) {
        drift(`${kept}; --prune keeps it too`, false);
        continue;
      }
      const waiting = await pendingGrantText(trx, services, d, 'a prune withdraws it');
      drift(
        `no longer declared: kept (apply with --prune to ${PRUNE_VERB[d.kind]})${waiting}`,
        true,
      );
      continue;
    }
    const outcome = await pruneOne(ctx, services, d, actor);
    if (outcome.kept) {
      drift(outcome.summary, false);
      continue;
    }
    await release(trx, set, d);
    const { summary } = outcome;
    changes.push({ document: -1, kind: d.kind, subject: subjectText(d), action: 'prune', summary });
  }
  return { changes, notes };
}

/**
 * For each of `gone`, another set that declares it too (the first by name), read in one query
 * (the ledger's key starts with the set, so one look-up per object would read the whole table
 * each time: a set applied file by file would cost the square of its size).
 */
async function otherSets(
  trx: CatalogWrite['trx'],
  set: string,
  gone: readonly Declared[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (gone.length === 0) return out;
  const wanted = new Set(gone.map(key));
  const rows = await trx
    .selectFrom('applied_objects')
    .select(['kind', 'subject', 'set_name'])
    .where('set_name', '!=', set)
    .orderBy('set_name')
    .execute();
  for (const row of rows) {
    const k = key(row as Declared);
    if (wanted.has(k) && !out.has(k)) out.set(k, row.set_name);
  }
  return out;
}

/** Drops `d` from set `set`'s ledger: pruned, or left to another set that declares it. */
async function release(trx: CatalogWrite['trx'], set: string, d: Declared): Promise<void> {
  await trx
    .deleteFrom('applied_objects')
    .where('set_name', '=', set)
    .where('kind', '=', d.kind)
    .where('subject', '=', d.subject)
    .execute();
}

/**
 * The tool versions (`id@version`) a prune of this set would retire: drafts no longer declared
 * and declared by no other set. They keep no destination set in the plan without `--prune`,
 * as in the prune itself (destination sets are pruned last).
 */
async function draftsRetiredBy(
  trx: CatalogWrite['trx'],
  others: ReadonlyMap<string, string>,
  gone: readonly Declared[],
): Promise<Set<string>> {
  const out = new Set<string>();
  const tools = gone.filter((d) => d.kind === 'Tool' && !others.has(key(d)));
  const ids = [...new Set(tools.map((d) => d.subject.slice(0, d.subject.lastIndexOf('@'))))];
  const now = new Date();
  for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
    const rows = await trx
      .selectFrom('tool_versions')
      .select(['tool_id', 'version', 'lifecycle', 'retire_at'])
      .where('tool_id', 'in', ids.slice(i, i + LOOKUP_CHUNK))
      .execute();
    for (const row of rows) {
      const state = { lifecycle: row.lifecycle as LifecycleState, retire_at: row.retire_at };
      if (effectiveLifecycleOf(state, now) === 'draft') out.add(`${row.tool_id}@${row.version}`);
    }
  }
  const named = new Set(tools.map((d) => d.subject));
  for (const subject of out) if (!named.has(subject)) out.delete(subject);
  return out;
}

/** Ids per IN list: under SQLite's and PostgreSQL's bound-parameter limits. */
const LOOKUP_CHUNK = 500;

/** Why a prune would keep `d` by a rule (its whole drift line), or null when it would remove it. */
async function keptByRule(
  trx: CatalogWrite['trx'],
  services: PruneServices,
  d: Declared,
  retiring: ReadonlySet<string>,
): Promise<string | null> {
  if (d.kind === 'DestinationSet') return destinationSetKept(trx, d.subject, retiring);
  if (d.kind === 'Operator') return operatorKept(trx, services.operator, d.subject);
  return null;
}

/** What the plan says of a declared object beside its change (docs/configuration.md "Converging"). */
export interface DeclarationNote {
  /** The other sets that declare it too. */
  readonly others: readonly string[];
  /** Declared by this set for the first time (and by no other set). */
  readonly newToSet: boolean;
}

/** The ledger key of a declared object. */
export const declaredKey = (d: Declared): string => `${d.kind}\u0000${d.subject}`;
const key = declaredKey;

async function declarationNotes(
  trx: CatalogWrite['trx'],
  set: string,
  declared: readonly Declared[],
  newToSet: ReadonlySet<string>,
): Promise<Map<string, DeclarationNote>> {
  const notes = new Map<string, DeclarationNote>();
  if (declared.length === 0) return notes;
  const kinds = [...new Set(declared.map((d) => d.kind))];
  const rows = await trx
    .selectFrom('applied_objects')
    .select(['set_name', 'kind', 'subject'])
    .where('set_name', '!=', set)
    .where('kind', 'in', kinds)
    .orderBy('set_name')
    .execute();
  const others = new Map<string, string[]>();
  for (const r of rows) {
    const k = `${r.kind}\u0000${r.subject}`;
    others.set(k, [...(others.get(k) ?? []), r.set_name]);
  }
  for (const d of declared) {
    const k = key(d);
    const sets = others.get(k) ?? [];
    notes.set(k, { others: sets, newToSet: newToSet.has(k) && sets.length === 0 });
  }
  return notes;
}

/**
 * A change's summary with what the notes of its document's objects say: another set also
 * declares it (two sets' files decide it, the last apply wins), or this set adopts an object
 * that existed before, made by hand or before sets (a later prune of this set would touch it).
 */
function notedSummary(
  summary: string,
  action: string,
  notes: readonly (DeclarationNote | undefined)[],
): string {
  const others = [...new Set(notes.flatMap((n) => n?.others ?? []))];
  const tail: string[] = [];
  if (others.length > 0) tail.push(`also declared by set ${others.join(', ')}`);
  else if (action !== 'create' && notes.some((n) => n?.newToSet))
    tail.push('adopted (existed, made by hand or before sets)');
  return tail.length === 0 ? summary : `${summary}; ${tail.join('; ')}`;
}

/** For a grant no longer declared: its pending change requests, as a summary's tail. */
async function pendingGrantText(
  trx: CatalogWrite['trx'],
  services: PruneServices,
  d: Declared,
  fate: string,
): Promise<string> {
  if (d.kind !== 'Grant') return '';
  const [agent = '', capability = ''] = d.subject.split(' ');
  const ids = await services.changes.pendingGrantIn(trx, agent, capability);
  return ids.map((id) => `; change ${id} is pending (${fate})`).join('');
}

const PRUNE_VERB: Readonly<Record<ConfigDocument['kind'], string>> = {
  Agent: 'disable it',
  User: 'disable it',
  Tool: 'withdraw it',
  Policy: 'delete it',
  Grant: 'revoke it',
  Provider: 'remove it',
  DestinationSet: 'delete it',
  Operator: 'disable it',
  OwnerChannel: 'remove it',
};

function subjectText(d: Declared): string {
  if (d.kind === 'Grant') {
    const [agent, capability] = d.subject.split(' ');
    return `grant ${agent} ${capability}`;
  }
  return `${SUBJECT_NOUN[d.kind]} ${d.subject}`;
}

const SUBJECT_NOUN: Readonly<Record<ConfigDocument['kind'], string>> = {
  Agent: 'agent',
  User: 'user',
  Tool: 'tool',
  Policy: 'policy',
  Grant: 'grant',
  Provider: 'provider',
  DestinationSet: 'destination set',
  Operator: 'operator',
  OwnerChannel: 'owner channel',
};

async function pruneOne(
  ctx: CatalogWrite,
  services: PruneServices,
  d: Declared,
  actor: Actor,
): Promise<PruneOutcome> {
  if (d.kind === 'DestinationSet') {
    return pruneDestinationSet(ctx.trx, services.destinationSets, d.subject, actor, REASON);
  }
  if (d.kind === 'OwnerChannel') {
    return pruneOwnerChannel(ctx.trx, services.ownerChannels, d.subject, actor, REASON);
  }
  if (d.kind === 'Operator') {
    const { operators, operator } = services;
    return pruneOperator(ctx.trx, operators, operator, d.subject, actor.via, REASON);
  }
  return { summary: await pruneSummary(ctx, services, d, actor) };
}

async function pruneSummary(
  ctx: CatalogWrite,
  services: PruneServices,
  d: Declared,
  actor: Actor,
): Promise<string> {
  const { trx } = ctx;
  switch (d.kind) {
    case 'Agent':
      return (await services.agents.disableIn(trx, d.subject, actor, REASON))
        ? 'disabled'
        : 'already disabled or gone';
    case 'User':
      return (await services.users.disableIn(trx, d.subject, actor, REASON))
        ? 'disabled'
        : 'already disabled or gone';
    case 'Grant': {
      const [agent = '', capability = ''] = d.subject.split(' ');
      const removed = await services.agents.revokeIn(trx, agent, [capability], actor, REASON);
      // A grant still waiting for its approvers is withdrawn too: approving it later would grant
      // what no set declares.
      const withdrawn = await services.changes.withdrawGrantIn(
        trx,
        agent,
        capability,
        actor,
        REASON,
      );
      return [
        removed.length > 0 ? 'revoked' : 'not held',
        ...withdrawn.map((id) => `change ${id} withdrawn`),
      ].join('; ');
    }
    case 'Policy': {
      if (!(await services.policies.removeIn(trx, d.subject, actor, REASON))) return 'gone';
      const problems = await services.policies.check(trx, []);
      if (problems.length > 0) {
        throw new ToolgateError(
          'CONFIG_INVALID',
          `configuration refused, nothing applied: deleting policy ${d.subject} leaves a policy set that does not load (${problems[0]?.message ?? ''})`,
          { problems: [] },
        );
      }
      ctx.changed = true;
      return 'deleted';
    }
    case 'Tool': {
      const at = d.subject.lastIndexOf('@');
      const [toolId, version] = [d.subject.slice(0, at), d.subject.slice(at + 1)];
      const row = await trx
        .selectFrom('tool_versions')
        .select(['lifecycle', 'retire_at'])
        .where('tool_id', '=', toolId)
        .where('version', '=', version)
        .executeTakeFirst();
      const from = row
        ? effectiveLifecycleOf(
            { lifecycle: row.lifecycle as LifecycleState, retire_at: row.retire_at },
            new Date(),
          )
        : null;
      // Through the lifecycle: an active version is deprecated (it retires when its migration
      // window ends), a draft is retired; a deprecated or retired one is on its way already.
      if (from !== 'active' && from !== 'draft') return 'already deprecated, retired or gone';
      const to = from === 'active' ? 'deprecated' : 'retired';
      const detail = await services.catalog.transitionIn(ctx, toolId, version, to, actor, {
        reason: REASON,
        ...(to === 'deprecated' ? { windowDays: DEFAULT_MIGRATION_WINDOW_DAYS } : {}),
      });
      return to === 'retired'
        ? `retired (was ${from})`
        : `deprecated, retires ${detail.retire_at ?? ''}`;
    }
    case 'Provider':
    case 'DestinationSet':
    case 'Operator':
    case 'OwnerChannel':
      return 'kept';
  }
}

/** The changes of an apply's documents, each with its objects' notes (`notedSummary`). */
export function withNotes<C extends { document: number; action: string; summary: string }>(
  changes: readonly C[],
  docs: readonly { index: number; doc: ConfigDocument }[],
  notes: ReadonlyMap<string, DeclarationNote>,
): C[] {
  const byIndex = new Map(docs.map((d) => [d.index, d]));
  return changes.map((c) => {
    const doc = byIndex.get(c.document);
    if (!doc) return c;
    const found = declaredObjects([doc]).map((d) => notes.get(declaredKey(d)));
    return { ...c, summary: notedSummary(c.summary, c.action, found) };
  });
}
