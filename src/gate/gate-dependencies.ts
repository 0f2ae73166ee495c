/**
 * @module What the gate is built from (docs/architecture.md §3): the services a Gate takes
 * (GateDependencies) and the set its steps share, with fresh caches, one per gate and per step test
 * (stepDependencies).
 */
import { type Clock, systemClock } from '../core/index.js';
import type { CatalogService, HealthGate } from '../domain/catalog/index.js';
import type { CredentialBroker } from '../domain/credentials/index.js';
import type { ApprovalDesk } from '../domain/decisions/index.js';
import type { IdempotencyStore } from '../domain/idempotency/index.js';
import type {
  AgentService,
  OAuthResourceServerConfig,
  UserService,
} from '../domain/identity/index.js';
import type { CallCounters } from '../domain/limits/index.js';
import type { PolicySupplier, SetMembership } from '../domain/policy/index.js';
import type { GovernedUris, SessionService } from '../domain/sessions/index.js';
import type { RuntimeRegistry } from '../execution/runtimes/index.js';
import type { AuditWriter } from './audit-writer.js';
import type { CallTracer } from './call-tracer.js';
import { IdentityCache } from './identity-cache.js';
import type { PreviewRunner } from './preview-runner.js';
import type { CatalogFollower, RevisionSignal, Revisions } from './revision-watch.js';
import { type AfterInjection, DEFAULT_AFTER_INJECTION } from './steps/after-injection.js';
import type { Step, StepDependencies } from './steps/step.js';
import { ToolCache } from './tool-cache.js';

export interface GateDependencies {
  readonly catalog: CatalogService;
  readonly agents: AgentService;
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly approvals: ApprovalDesk;
  /**
   * One runtime per kind (docs/architecture.md §4); a tool whose kind has none here is refused,
   * never run with less isolation than it asks for.
   */
  readonly runtimes: RuntimeRegistry;
  /** Opens a tool's own credential for one call, after the gate passed. */
  readonly credentials?: Pick<CredentialBroker, 'forCall'>;
  /** Loads the org policy engine; called again after every catalog or policy change. */
  readonly policies?: PolicySupplier;
  readonly clock?: Clock;
  /** The chained audit log's writer (shared with the checkpointer). */
  readonly audit: AuditWriter;
  /** Rate slots, external sends, spend and rolling ceilings, private-read marks. */
  readonly counters: CallCounters;
  /** Idempotency records: lookup, claim, stored result, sweep. */
  readonly idempotency: IdempotencyStore;
  /** The stored catalog and identity revisions: how other processes' changes reach this gate. */
  readonly revisions: () => Promise<Revisions>;
  /** The fleet's notifications of revision bumps (Store.fleet); without it, polling alone. */
  readonly revisionSignal?: RevisionSignal;
  /**
   * What else follows the catalog revision (the provider specs calls run under): awaited whenever
   * the gate sees the revision move, before the call goes on (revision-watch.ts).
   */
  readonly catalogFollowers?: readonly CatalogFollower[];
  /**
   * What waits for a reviewer once injection text entered a session (steps/after-injection.ts);
   * default: every state-changing call.
   */
  readonly afterInjection?: AfterInjection;
  /** Live destination sets a tool's destinations rules may name (the policy step asks them). */
  readonly destinationSets?: SetMembership;
  /** The health monitor (C14): unavailable tools fail fast, live outcomes feed passive health. */
  readonly health?: HealthGate;
  /**
   * What a resource URI names over every provider (policy step): a template's read must name
   * that template. None: every template read is refused (fail closed).
   */
  readonly governedUris?: Pick<GovernedUris, 'resolve'>;
  /** The steps to run, in order; GATE_STEPS unless a test watches them run. */
  readonly steps?: readonly Step[];
  /** The OAuth resource server's scopes (scope step); none: toolgate takes no access tokens. */
  readonly oauth?: Pick<OAuthResourceServerConfig, 'scopes'>;
  /**
   * Records a refusal that has no session of the caller to be audited in (a step-up asked before
   * any session or run was named) as a security event of the principal.
   */
  readonly principalEvents?: (
    action: string,
    subject: string,
    details: Record<string, unknown>,
  ) => Promise<void>;
  /** Traces calls (call-tracer.ts); none: tracing is off and costs one test per call. */
  readonly tracer?: CallTracer;
}

/** The services the steps use, with fresh caches: one set per gate (and per step test). */
export function stepDependencies(
  deps: GateDependencies,
  lostPostRecord: () => void,
  previews?: Pick<PreviewRunner, 'start'>,
): StepDependencies {
  return {
    sessions: deps.sessions,
    approvals: deps.approvals,
    runtimes: deps.runtimes,
    credentials: deps.credentials,
    clock: deps.clock ?? systemClock,
    audit: deps.audit,
    counters: deps.counters,
    idempotency: deps.idempotency,
    tools: new ToolCache(deps.catalog, deps.policies),
    identities: new IdentityCache(deps.agents, deps.users, deps.sessions),
    destinationSets: deps.destinationSets,
    lostPostRecord,
    previews,
    afterInjection: deps.afterInjection ?? DEFAULT_AFTER_INJECTION,
    health: deps.health ?? NO_HEALTH,
    governedUris: deps.governedUris,
    scopes: deps.oauth ? { config: deps.oauth, catalog: deps.catalog } : undefined,
  };
}

/** Without a monitor every tool is admitted and nothing is observed. */
const NO_HEALTH: HealthGate = Object.freeze({
  admit: () => null,
  observe: () => {},
});
