/**
 * @module `apply -f` (C18, docs/architecture.md §2): validates every document of a file, then
 * applies all of them in ONE transaction. Any invalid document refuses the whole file and nothing
 * is written. A dry run performs the same work and rolls it back, so its plan is exactly what a
 * real apply would do. Idempotent: applying the same file twice changes nothing the second time.
 * Each kind is applied by its own applier (apply-kinds/), in an order that lets a document name
 * what another of the same file declares.
 */
import { type Actor, checkActor, problem, ToolgateError } from '../../core/index.js';
import {
  type CatalogService,
  prescanDefinitions,
  type ToolDefinition,
} from '../../domain/catalog/index.js';
import type { ChangeDesk } from '../../domain/decisions/index.js';
import type { AgentService, UserService } from '../../domain/identity/index.js';
import {
  applyOperatorsForbidden,
  enabledAdmins,
  holdAccountsIn,
  type OperatorService,
} from '../../domain/operators/index.js';
import type { DestinationSets, PolicyService } from '../../domain/policy/index.js';
import type { ProviderService } from '../../execution/providers/index.js';
import type { OwnerChannels } from '../owners/index.js';
import {
  applyPolicies,
  applyProviders,
  applyTools,
  importProviders,
} from './apply-kinds/catalog-kinds.js';
import { applyDestinationSets } from './apply-kinds/destination-set-kind.js';
import { applyAgents, applyGrants, applyUsers } from './apply-kinds/identity-kinds.js';
import { applyOperators, keepAnAdmin } from './apply-kinds/operator-kind.js';
import {
  applyOwnerChannels,
  type ChannelUrls,
  readChannelUrls,
} from './apply-kinds/owner-channel-kind.js';
import type {
  ApplyChange,
  ApplyOptions,
  ApplyResult,
  ConfigProblem,
  IndexedDocument,
  KindContext,
  KindOutcome,
} from './apply-types.js';
import { type ConfigDocument, expandDemoFolder, parseConfigText } from './config-document.js';
import { checkDocuments, configInvalid } from './config-problems.js';
import {
  APPLY_SET_PATTERN,
  DEFAULT_APPLY_SET,
  declaredObjects,
  declaredTwiceProblems,
  type PruneServices,
  reconcileSet,
  withNotes,
} from './prune.js';

export type { ApplyChange, ApplyOptions, ApplyResult, ChangeAction } from './apply-types.js';

/** The services `apply` writes through; each kind's rules are its service's, never repeated here. */
export interface ApplyServices {
  readonly catalog: CatalogService;
  readonly agents: AgentService;
  readonly users: UserService;
  readonly policies: PolicyService;
  readonly changes: ChangeDesk;
  /** Upstream providers; without them a file with `kind: Provider` is refused. */
  readonly providers?: ProviderService | null;
  readonly destinationSets: DestinationSets;
  readonly operators: OperatorService;
  readonly ownerChannels: OwnerChannels;
}

/** A string field of the specs of one kind's documents (checked already), e.g. the sets' names. */
function specField(docs: readonly IndexedDocument[], kind: string, field: string): string[] {
  return docs
    .filter((d) => d.doc.kind === kind)
    .map((d) => (d.doc.spec as Record<string, unknown>)[field])
    .filter((v): v is string => typeof v === 'string');
}

class DryRunRollback extends Error {
  constructor(readonly result: ApplyResult) {
    super('dry run');
  }
}

export class ApplyService {
  readonly #s: ApplyServices;

  constructor(services: ApplyServices) {
    this.#s = services;
  }

  /** What a prune writes through, and the person it acts as (accounts are disabled as them). */
  #pruneServices(options: ApplyOptions): PruneServices {
    return { ...this.#s, operator: options.operator };
  }

  async applyText(text: string, actor: Actor, options: ApplyOptions = {}): Promise<ApplyResult> {
    checkActor(actor);
    return this.apply(parseConfigText(text), actor, options);
  }

  async apply(
    raw: readonly unknown[],
    actor: Actor,
    options: ApplyOptions = {},
  ): Promise<ApplyResult> {
    checkActor(actor);
    const dryRun = options.dryRun ?? false;
    const prune = options.prune ?? false;
    const set = options.set === undefined ? DEFAULT_APPLY_SET : options.set;
    if (set === null ? prune : !APPLY_SET_PATTERN.test(set)) {
      throw new ToolgateError('INPUT_INVALID', `the set name must match ${APPLY_SET_PATTERN}`, {
        problems: [problem('/set', `must match ${APPLY_SET_PATTERN}`, 'pattern')],
      });
    }
    if (prune && options.operator && !options.operator.roles.includes('admin')) {
      throw new ToolgateError(
        'FORBIDDEN',
        'only an admin may prune: apply without --prune lists what is no longer declared',
        {},
      );
    }
    const docs = checkDocuments(raw.map((doc) => expandDemoFolder(doc)));
    const twice = declaredTwiceProblems(docs);
    if (twice.length > 0) throw configInvalid(twice);
    // Accounts are changed as a person, an admin, under the rules of `operators` commands.
    const by = options.operator;
    if (docs.some((d) => d.doc.kind === 'Operator') && !by?.roles.includes('admin')) {
      throw applyOperatorsForbidden(by);
    }
    // Many tools' poisoning scans start on worker threads; registration takes them (C3, bulk).
    prescanDefinitions(
      docs.flatMap((d) => (d.doc.kind === 'Tool' ? [d.doc.spec as ToolDefinition] : [])),
    );
    // Channel URLs are read and checked (DNS) before the transaction: it holds no lock meanwhile.
    const channelDocs = docs.filter((d) => d.doc.kind === 'OwnerChannel');
    const urls = await readChannelUrls(channelDocs, options, this.#s.ownerChannels);
    const write = () =>
      this.#s.catalog.write(async (ctx) => {
        // As an operator: the accounts' lock first, and the author's account read again under it
        // (a disable of them that committed meanwhile refuses this apply: attack round 22, Y9).
        if (by) await holdAccountsIn(ctx.trx, by, actor.via);
        // Then the locks of the sets and teams whose caps its documents count against (Y15).
        await this.#s.destinationSets.lockIn(ctx.trx, specField(docs, 'DestinationSet', 'name'));
        await this.#s.ownerChannels.lockTeamsIn(ctx.trx, specField(docs, 'OwnerChannel', 'team'));
        const admins = await enabledAdmins(ctx.trx);
        const { changes, problems } = await this.#applyAll({ ctx, actor, options }, docs, urls);
        if (problems.length > 0) throw configInvalid(problems);
        const reconciled =
          set === null
            ? null
            : await reconcileSet(
                ctx,
                this.#pruneServices(options),
                set,
                declaredObjects(docs),
                actor,
                prune,
              );
        await keepAnAdmin(ctx.trx, admins);
        const noted = reconciled ? withNotes(changes, docs, reconciled.notes) : changes;
        const result: ApplyResult = {
          dryRun,
          changes: [
            ...noted.sort((a, b) => a.document - b.document),
            ...(reconciled?.changes ?? []),
          ],
        };
        if (dryRun) throw new DryRunRollback(result);
        return result;
      });
    let result: ApplyResult;
    try {
      // A four-eyes refusal anywhere in the transaction is audited once it rolled back.
      result = by ? await this.#s.operators.auditedApply(by, actor.via, write) : await write();
    } catch (err) {
      if (err instanceof DryRunRollback) return err.result;
      throw err;
    }
    return importProviders(result, actor, this.#s.providers ?? null);
  }

  /**
   * Every kind in an order that lets a document name what another declares: destination sets
   * before the tools whose rules name them, agents before the grants that name them. Problems of every kind are gathered, so one refusal lists them all.
   */
  async #applyAll(
    k: KindContext,
    docs: readonly IndexedDocument[],
    urls: ChannelUrls,
  ): Promise<{ changes: ApplyChange[]; problems: ConfigProblem[] }> {
    const s = this.#s;
    const ofKind = (kind: ConfigDocument['kind']) => docs.filter((d) => d.doc.kind === kind);
    const steps: (() => Promise<KindOutcome>)[] = [
      () => applyOperators(k, ofKind('Operator'), s.operators),
      () => applyDestinationSets(k, ofKind('DestinationSet'), s.destinationSets),
      () => applyAgents(k, ofKind('Agent'), s.agents),
      () => applyUsers(k, ofKind('User'), s.users),
      () => applyTools(k, ofKind('Tool'), s.catalog),
      () => applyPolicies(k, ofKind('Policy'), s.policies),
      () => applyGrants(k, ofKind('Grant'), s.agents, s.changes),
      () => applyProviders(k, ofKind('Provider'), s.providers ?? null),
      () => applyOwnerChannels(k, ofKind('OwnerChannel'), s.ownerChannels, urls),
    ];
    const changes: ApplyChange[] = [];
    const problems: ConfigProblem[] = [];
    for (const step of steps) {
      const out = await step();
      changes.push(...out.changes);
      problems.push(...out.problems);
    }
    return { changes, problems };
  }
}
