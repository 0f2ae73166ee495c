/**
 * @module `apply -f` (C18, docs/architecture.md §2): validates every document of a file, then
 * applies all of them in ONE transaction. Any invalid document refuses the whole file and nothing
 * is written. A dry run performs the same work and rolls it back, so its plan is exactly what a
 * real apply would do. Idempotent: applying the same file twice changes nothing the second time.
 */
import semver from 'semver';
import {
  type Actor,
  checkActor,
  exceedsDepth,
  MAX_DOCUMENT_DEPTH,
  type Problem,
  problem,
  ToolgateError,
} from '../../core/index.js';
import {
  type CatalogService,
  type CatalogWrite,
  checkToolDefinition,
  compileDocumentValidator,
  type ToolDefinition,
} from '../../domain/catalog/index.js';
import type { ChangeDesk } from '../../domain/decisions/index.js';
import {
  type AgentService,
  type AgentSpec,
  agentSpecSchema,
  agentSpecTextProblems,
  type GrantSpec,
  grantSpecSchema,
  type UserService,
  type UserSpec,
  userSpecSchema,
  userSpecTextProblems,
} from '../../domain/identity/index.js';
import type { Operator } from '../../domain/operators/index.js';
import {
  type PolicyService,
  type PolicySpec,
  policySpecSchema,
} from '../../domain/policy/index.js';
import {
  checkProviderSpec,
  type ProviderService,
  type ProviderSpec,
} from '../../execution/providers/index.js';
import {
  type ConfigDocument,
  expandDemoFolder,
  parseConfigText,
  RESERVED_KINDS,
  SUPPORTED_KINDS,
} from './config-document.js';
import {
  APPLY_SET_PATTERN,
  DEFAULT_APPLY_SET,
  declaredObjects,
  type PruneServices,
  reconcileSet,
  withNotes,
} from './prune.js';

/** prune: narrowed, disabled, withdrawn or deleted by --prune; drift: no longer declared, kept. */
export type ChangeAction = 'create' | 'update' | 'unchanged' | 'prune' | 'drift';

export interface ApplyOptions {
  readonly dryRun?: boolean;
  /**
   * The person applying, where one is known (REST): its tools are held to the catalog's
   * registrant rules (an owner self-registers only public, read-only tools of their teams).
   */
  readonly operator?: Operator;
  /**
   * Remove or narrow what this set declared before and the documents no longer declare
   * (prune.ts); without it such objects are listed as drift and kept. Admins only.
   */
  readonly prune?: boolean;
  /**
   * The named configuration set this apply declares (default `default`); null for a one-off write
   * that belongs to no set (`grants add`, `agents create`): it is never listed as drift or pruned.
   */
  readonly set?: string | null;
}

export interface ApplyChange {
  readonly document: number;
  readonly kind: ConfigDocument['kind'];
  readonly subject: string;
  readonly action: ChangeAction;
  readonly summary: string;
  readonly quarantined?: boolean;
}

export interface ApplyResult {
  readonly dryRun: boolean;
  readonly changes: readonly ApplyChange[];
}

type ConfigProblem = Problem & { document: number; kind?: string };

class DryRunRollback extends Error {
  constructor(readonly result: ApplyResult) {
    super('dry run');
  }
}

/** The envelope; each kind's spec is then checked by its own validator, so every problem is listed. */
const validateEnvelope = compileDocumentValidator({
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'spec'],
  properties: {
    apiVersion: { const: 'toolgate/v1' },
    kind: { enum: [...SUPPORTED_KINDS] },
    spec: { type: 'object' },
  },
});
/**
 * Checks one spec; a valid tool spec is replaced by its checked, normalized definition so the
 * registration inside the transaction does not check it a second time.
 */
type SpecCheck = (spec: unknown) => { problems: Problem[]; spec: unknown };
const validateSpec: Record<ConfigDocument['kind'], SpecCheck> = {
  Tool: (spec) => {
    const checked = checkToolDefinition(spec);
    return checked.ok
      ? { problems: [], spec: checked.definition }
      : { problems: [...checked.problems], spec };
  },
  Agent: withText(compileDocumentValidator(agentSpecSchema), agentSpecTextProblems),
  User: withText(compileDocumentValidator(userSpecSchema), userSpecTextProblems),
  Policy: withSpec(compileDocumentValidator(policySpecSchema)),
  Grant: withSpec(compileDocumentValidator(grantSpecSchema)),
  Provider: withSpec(checkProviderSpec),
};

function withSpec(validate: (spec: unknown) => Problem[]): SpecCheck {
  return (spec) => ({ problems: validate(spec), spec });
}

/**
 * The schema, then (on a spec of the right shape) the domain's rule for the text a person reads
 * (a printable display name and description), so a dry run lists those problems too.
 */
function withText<S>(
  validate: (spec: unknown) => Problem[],
  text: (spec: S) => Problem[],
): SpecCheck {
  return (spec) => {
    const problems = validate(spec);
    return { problems: problems.length > 0 ? problems : text(spec as S), spec };
  };
}

export class ApplyService {
  readonly #catalog: CatalogService;
  readonly #agents: AgentService;
  readonly #users: UserService;

  readonly #policies: PolicyService;
  readonly #changes: ChangeDesk;
  /** Upstream providers; without them a file with `kind: Provider` is refused. */
  readonly #providers: ProviderService | null;

  constructor(
    catalog: CatalogService,
    agents: AgentService,
    users: UserService,
    policies: PolicyService,
    changes: ChangeDesk,
    providers: ProviderService | null = null,
  ) {
    this.#providers = providers;
    this.#catalog = catalog;
    this.#agents = agents;
    this.#users = users;
    this.#changes = changes;
    this.#policies = policies;
  }

  get #pruneServices(): PruneServices {
    return {
      catalog: this.#catalog,
      agents: this.#agents,
      users: this.#users,
      policies: this.#policies,
      changes: this.#changes,
    };
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
    let result: ApplyResult;
    try {
      result = await this.#catalog.write(async (ctx) => {
        const { changes, problems } = await this.#applyAll(ctx, docs, actor, options.operator);
        if (problems.length > 0) throw configInvalid(problems);
        const reconciled =
          set === null
            ? null
            : await reconcileSet(
                ctx,
                this.#pruneServices,
                set,
                declaredObjects(docs),
                actor,
                prune,
              );
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
    } catch (err) {
      if (err instanceof DryRunRollback) return err.result;
      throw err;
    }
    return this.#importProviders(result, actor);
  }

  /**
   * Registered or changed providers are listed and their tools imported after the commit: an
   * upstream process is never started inside the configuration's transaction. A provider that
   * cannot be listed stays registered, with the reason in its change summary.
   */
  async #importProviders(result: ApplyResult, actor: Actor): Promise<ApplyResult> {
    const providers = this.#providers;
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

  async #applyAll(
    ctx: CatalogWrite,
    docs: readonly { index: number; doc: ConfigDocument }[],
    actor: Actor,
    operator: Operator | undefined,
  ): Promise<{ changes: ApplyChange[]; problems: ConfigProblem[] }> {
    const changes: ApplyChange[] = [];
    const problems: ConfigProblem[] = [];
    const ofKind = (kind: ConfigDocument['kind']) => docs.filter((d) => d.doc.kind === kind);

    // Agents first so grants in the same file can name them; tools oldest version first so
    // each version is compared with its predecessor from the same file.
    for (const { index, doc } of ofKind('Agent')) {
      const spec = doc.spec as AgentSpec;
      const { outcome } = await this.#agents.upsertIn(ctx.trx, spec, actor);
      changes.push({
        document: index,
        kind: 'Agent',
        subject: `agent ${spec.id}`,
        action: outcome === 'created' ? 'create' : outcome === 'updated' ? 'update' : 'unchanged',
        summary: outcome === 'unchanged' ? 'unchanged' : `${outcome} (owner ${spec.owner})`,
      });
    }
    for (const { index, doc } of ofKind('User')) {
      const spec = doc.spec as UserSpec;
      const outcome = await this.#users.upsertIn(ctx.trx, spec, actor);
      changes.push({
        document: index,
        kind: 'User',
        subject: `user ${spec.id}`,
        action: outcome === 'created' ? 'create' : outcome === 'updated' ? 'update' : 'unchanged',
        summary:
          outcome === 'unchanged'
            ? 'unchanged'
            : `${outcome} (${spec.permissions.length} permissions)`,
      });
    }
    const tools = ofKind('Tool').sort((a, b) => {
      const x = a.doc.spec as ToolDefinition;
      const y = b.doc.spec as ToolDefinition;
      return x.id.localeCompare(y.id) || semver.compare(x.version, y.version);
    });
    for (const { index, doc } of tools) {
      const spec = doc.spec as ToolDefinition;
      try {
        const { outcome, tool, changeId, review } = await this.#catalog.registerIn(
          ctx,
          spec,
          actor,
          operator ? { operator } : {},
        );
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
    // Policies are validated as the whole set they will form, then written; a change bumps the
    // catalog revision so every gate reloads them.
    const policyDocs = ofKind('Policy');
    if (policyDocs.length > 0) {
      const specs = policyDocs.map((d) => d.doc.spec as PolicySpec);
      const found = await this.#policies.check(ctx.trx, specs);
      for (const p of found) {
        const at = policyDocs.find((d) => (d.doc.spec as PolicySpec).id === p.source);
        problems.push({
          ...problem(`/${at?.index ?? 0}/spec/text`, p.message, 'policy.cedar'),
          document: at?.index ?? 0,
          kind: 'Policy',
        });
      }
      if (found.length === 0) {
        for (const { index, doc } of policyDocs) {
          const spec = doc.spec as PolicySpec;
          const outcome = await this.#policies.upsertIn(ctx.trx, spec, actor);
          if (outcome !== 'unchanged') ctx.changed = true;
          changes.push({
            document: index,
            kind: 'Policy',
            subject: `policy ${spec.id}`,
            action:
              outcome === 'created' ? 'create' : outcome === 'updated' ? 'update' : 'unchanged',
            summary: outcome,
          });
        }
      }
    }
    // Grants that unlock privileged or irreversible tools wait for approvers (four eyes).
    const grantDocs = ofKind('Grant');
    const gated = grantDocs.length > 0 ? await this.#changes.gatedCapabilities(ctx.trx) : new Map();
    for (const { index, doc } of grantDocs) {
      const spec = doc.spec as GrantSpec;
      try {
        // Read through the write's own transaction: on SQLite another handle would wait forever.
        const held = new Set(
          (
            await ctx.trx
              .selectFrom('grants')
              .select('capability')
              .where('agent_id', '=', spec.agent)
              .execute()
          ).map((g) => g.capability),
        );
        const now = spec.capabilities.filter((c) => !gated.has(c));
        const waiting = spec.capabilities.filter((c) => gated.has(c) && !held.has(c));
        const added = await this.#agents.grantIn(
          ctx.trx,
          { agent: spec.agent, capabilities: now },
          actor,
        );
        const requested: string[] = [];
        for (const capability of waiting) {
          const gate = gated.get(capability) as { required: number; tools: string[] };
          const { id, created } = await this.#changes.requestIn(
            ctx.trx,
            { kind: 'grant', agentId: spec.agent, capability },
            gate.required,
            `unlocks ${gate.tools.join(', ')}`,
            actor,
          );
          // Applying the same file again finds the same pending request: nothing changes.
          if (created) {
            requested.push(
              `${capability} (awaiting ${gate.required} approver${gate.required > 1 ? 's' : ''}: ${id})`,
            );
          }
        }
        changes.push({
          document: index,
          kind: 'Grant',
          subject: `grant ${spec.agent}`,
          action: added.length > 0 || requested.length > 0 ? 'create' : 'unchanged',
          summary:
            added.length === 0 && requested.length === 0
              ? 'unchanged'
              : [
                  added.length > 0 ? `grants ${added.join(', ')}` : '',
                  requested.length > 0 ? `requests ${requested.join(', ')}` : '',
                ]
                  .filter((x) => x !== '')
                  .join('; '),
        });
      } catch (err) {
        problems.push(...refusalProblems(err, index, 'Grant'));
      }
    }
    for (const { index, doc } of ofKind('Provider')) {
      const spec = doc.spec as ProviderSpec;
      if (!this.#providers) {
        problems.push({
          ...problem(`/${index}/kind`, 'providers are not available here', 'config.kind'),
          document: index,
          kind: 'Provider',
        });
        continue;
      }
      const action = await this.#providers.saveIn(ctx, spec, actor);
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
}

/** Validates the envelope and every spec before anything is written; refuses with all problems. */
function checkDocuments(raw: readonly unknown[]): { index: number; doc: ConfigDocument }[] {
  const problems: ConfigProblem[] = [];
  const out: { index: number; doc: ConfigDocument }[] = [];
  if (raw.length === 0) {
    throw configInvalid([
      { ...problem('', 'the file holds no documents', 'config.empty'), document: -1 },
    ]);
  }
  raw.forEach((doc, index) => {
    if (exceedsDepth(doc)) {
      problems.push({
        ...problem(`/${index}`, `nests deeper than ${MAX_DOCUMENT_DEPTH} levels`, 'depth'),
        document: index,
      });
      return;
    }
    const kind =
      typeof doc === 'object' && doc !== null ? (doc as { kind?: unknown }).kind : undefined;
    if (kind === 'Secret') {
      // Secret values must not live in files that are committed, diffed and reviewed.
      problems.push({
        ...problem(
          `/${index}/kind`,
          'kind Secret is reserved and cannot be applied: secrets are managed only via the CLI (`toolgate secrets set NAME --tool TOOL`, value on stdin) or the admin API (PUT /v1/secrets/{tool}/{name}), never from configuration files',
          'config.kind.secret',
        ),
        document: index,
        kind,
      });
      return;
    }
    if (typeof kind === 'string' && (RESERVED_KINDS as readonly string[]).includes(kind)) {
      problems.push({
        ...problem(
          `/${index}/kind`,
          `kind ${kind} is reserved for a later version of toolgate and not supported yet`,
          'config.kind',
        ),
        document: index,
        kind,
      });
      return;
    }
    if (typeof kind !== 'string' || !(SUPPORTED_KINDS as readonly string[]).includes(kind)) {
      problems.push({
        ...problem(`/${index}/kind`, `must be one of ${SUPPORTED_KINDS.join(', ')}`, 'config.kind'),
        document: index,
      });
      return;
    }
    const envelope = validateEnvelope(doc);
    const checked =
      envelope.length > 0
        ? null
        : validateSpec[kind as ConfigDocument['kind']]((doc as { spec: unknown }).spec);
    const found = checked
      ? checked.problems.map((p) => ({ ...p, pointer: `/spec${p.pointer}` }))
      : envelope;
    if (found.length > 0 || !checked) {
      for (const p of found)
        problems.push({ ...p, pointer: `/${index}${p.pointer}`, document: index, kind });
      return;
    }
    out.push({ index, doc: { kind: kind as ConfigDocument['kind'], spec: checked.spec } });
  });
  if (problems.length > 0) throw configInvalid(problems);
  return out;
}

/** Registration refusals become problems located in their document. */
function refusalProblems(err: unknown, index: number, kind: string): ConfigProblem[] {
  if (!(err instanceof ToolgateError)) throw err;
  const base = `/${index}/spec`;
  switch (err.code) {
    case 'DEFINITION_INVALID':
    case 'BREAKING_CHANGE': {
      const details = err.details as { problems: Problem[] };
      const found = details.problems.map((p) => ({
        ...p,
        pointer: base + p.pointer,
        document: index,
        kind,
      }));
      return err.code === 'BREAKING_CHANGE'
        ? [{ ...problem(base, err.message, 'breaking'), document: index, kind }, ...found]
        : found;
    }
    case 'VERSION_EXISTS':
      return [
        { ...problem(`${base}/version`, err.message, 'version.exists'), document: index, kind },
      ];
    case 'AGENT_NOT_FOUND':
      return [
        {
          ...problem(
            `/${index}/spec/agent`,
            `${err.message}: declare it in this file or apply it first`,
            'grant.agent',
          ),
          document: index,
          kind,
        },
      ];
    default:
      throw err;
  }
}

function configInvalid(problems: ConfigProblem[]): ToolgateError<'CONFIG_INVALID'> {
  const docs = new Set(problems.map((p) => p.document)).size;
  const first = problems[0];
  return new ToolgateError(
    'CONFIG_INVALID',
    `configuration refused, nothing applied: ${problems.length} problem${problems.length === 1 ? '' : 's'} in ${docs} document${docs === 1 ? '' : 's'}${first ? ` (first: ${first.pointer || '(file)'} ${first.message})` : ''}`,
    { problems },
  );
}
