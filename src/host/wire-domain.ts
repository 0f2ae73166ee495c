/**
 * @module Wires the domain's services below the sessions (docs/architecture.md §2): the catalog,
 * identities, operators and their second factors, approvals, policies and destination sets. Ports
 * the domain owns are filled here: the catalog's host checks (the sandbox's protected paths) and
 * its change requester (the four-eyes requests, operations/config).
 */
import { CatalogService, Discovery, SecurityReviewDesk } from '../domain/catalog/index.js';
import type { MasterKey } from '../domain/credentials/index.js';
import {
  ApprovalDesk,
  ApprovalSigner,
  ApprovalWaits,
  OperatorPasskeys,
  OperatorSecondFactors,
  reviewPasskeys,
  SecondFactorGuard,
  SignInFactors,
  toolChangeRequester,
} from '../domain/decisions/index.js';
import { AgentKeys, AgentService, UserService } from '../domain/identity/index.js';
import { OperatorService } from '../domain/operators/index.js';
import { DestinationSets, type DirectoryReader, PolicyService } from '../domain/policy/index.js';
import { type AgentCaps, maxPendingApprovalsPerPrincipal } from '../domain/sessions/index.js';
import { definitionPathProblems, type SandboxService } from '../execution/sandbox/index.js';
import type { Notifier } from '../operations/notify/index.js';
import type { Store } from '../records/store/index.js';
import { clockOf, systemClockOf, type ToolgateOptions } from './toolgate-options.js';

export type DomainWing = ReturnType<typeof wireDomain>;

export function wireDomain(
  options: ToolgateOptions,
  store: Store,
  parts: {
    readonly config: { readonly caps: AgentCaps };
    readonly observers: { readonly notifier: Notifier };
    readonly host: { readonly sandbox: SandboxService };
    readonly loadMasterKey: () => MasterKey;
    /** Directory destination sets are read by toolgate itself, through the gate's runtimes. */
    readonly directory: DirectoryReader;
  },
) {
  const clock = clockOf(options);
  // Operators' second factors live in the store, sealed; one attempt counter per operator for
  // every check (and, through the store, every replica).
  const secondFactor: OperatorSecondFactors = new OperatorSecondFactors(
    store.db,
    parts.loadMasterKey,
    {
      ...clock,
      guard: new SecondFactorGuard(store.db, clock),
      // A second factor is enrolled for an operator account, never for a name nobody holds.
      operatorExists: (id): Promise<boolean> =>
        operators.get(id).then(
          () => true,
          () => false,
        ),
    },
  );
  // Passkeys: public keys in the store, single-use challenges, decisions they sign.
  const passkeys = new OperatorPasskeys(store.db, secondFactor, {
    ...clock,
    relyingParty: options.passkeys?.relyingParty ?? null,
    ...(options.passkeys?.rpName !== undefined ? { rpName: options.passkeys.rpName } : {}),
  });
  // Local logins check the same second factors as approvals (one code, one use), or a passkey.
  const operators: OperatorService = new OperatorService(store.db, {
    ...clock,
    secondFactor: new SignInFactors(secondFactor, passkeys),
    ...options.operators,
  });
  const catalog = new CatalogService(store, {
    ...clock,
    hostChecks: (definition) =>
      definitionPathProblems(parts.host.sandbox.protectedPaths, definition),
    // A reviewer's step-up checks the same sealed second factors as approvals.
    secondFactors: secondFactor,
    // Or a passkey over exactly the review; a review approval is permission-changing, so the
    // organisation's passkey requirement holds for it too.
    passkeys: reviewPasskeys(
      store.db,
      passkeys,
      options.passkeys?.required ?? false,
      systemClockOf(options),
    ),
    // A gated tool waits for its approvers: the request needs the store only, not the desk.
    changeRequester: toolChangeRequester(systemClockOf(options)),
  });
  // Held calls wake at once on a decision made here, by a poll on one made elsewhere.
  const waits: { current: ApprovalWaits | null } = { current: null };
  const approvals = new ApprovalDesk(
    store.db,
    options.approvalSigner ?? ApprovalSigner.generate(),
    {
      ...clock,
      secondFactors: secondFactor,
      passkeys,
      passkeyRequired: options.passkeys?.required ?? false,
      maxPendingPerAgent: parts.config.caps.maxPendingApprovalsPerAgent,
      maxPendingPerPrincipal: maxPendingApprovalsPerPrincipal(parts.config.caps),
      // A notifier without channels sends nothing.
      onPending: (view) => parts.observers.notifier.approvalPending(view),
      onDecided: (id) => waits.current?.poke(id),
    },
  );
  const approvalWaits = new ApprovalWaits(approvals, options.approvalWaits);
  waits.current = approvalWaits;
  return {
    catalog,
    reviews: new SecurityReviewDesk(store.db),
    discovery: new Discovery(catalog),
    agents: new AgentService(store, clock),
    keys: new AgentKeys(store.db, options.clock),
    users: new UserService(store.db, options.clock),
    secondFactor,
    passkeys,
    operators,
    approvals,
    approvalWaits,
    policies: new PolicyService(store.db, options.clock),
    destinationSets: new DestinationSets(store.db, options.clock, parts.directory),
  };
}
