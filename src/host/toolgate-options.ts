/**
 * @module What `openToolgate` and `openGateway` take (`ToolgateOptions`): the store, the clock,
 * keys, the outbound and egress rules, and each wing's settings (docs/configuration.md).
 */
import { type Clock, systemClock } from '../core/index.js';
import type { HealthReader } from '../domain/catalog/index.js';
import type { MasterKey } from '../domain/credentials/index.js';
import type {
  ApprovalSigner,
  ApprovalWaitsOptions,
  RelyingParty,
} from '../domain/decisions/index.js';
import type { JwtConfig, OAuthResourceServerConfig } from '../domain/identity/index.js';
import type { OperatorServiceOptions, SecondFactorCheck } from '../domain/operators/index.js';
import type { PolicyEngine } from '../domain/policy/index.js';
import type { AgentCaps } from '../domain/sessions/index.js';
import type { CheckedFetchOptions } from '../execution/providers/index.js';
import type { HttpToolRunner, InlineExecutor } from '../execution/runtimes/index.js';
import type { EgressProxy, OutboundOptions, SandboxService } from '../execution/sandbox/index.js';
import type { AfterInjection } from '../gate/index.js';
import type { DetectorsConfigInput } from '../operations/detectors/index.js';
import type { HealthConfigInput } from '../operations/health/index.js';
import type { NotifyConfigInput } from '../operations/notify/index.js';
import type { OwnerNoticesOptions } from '../operations/owners/index.js';
import type { TracingConfig } from '../operations/tracing/index.js';
import type { NoteSigner } from '../records/audit/index.js';

export interface ToolgateOptions {
  /** `sqlite:PATH` (default `sqlite:./data/toolgate.db`) or `postgres://…`. */
  readonly db?: string;
  readonly clock?: Clock;
  /** Signs approval tokens; keep it across restarts (serve keeps it in the data folder). */
  readonly approvalSigner?: ApprovalSigner | (() => ApprovalSigner);
  /**
   * Calls the MCP front holds open while a person decides (docs/mcp.md, "Stock clients wait for
   * the person"): how often other processes' decisions are looked for, and how many at once.
   */
  readonly approvalWaits?: ApprovalWaitsOptions;
  /** In-process handlers for `inline` tools; default: the demo catalog's. */
  readonly executor?: InlineExecutor;
  /**
   * Where agents' discovery reads tool health for its ranking and marks (C5, C14); default: this
   * gateway's health monitor. Another source (a fleet-wide health service) may stand in for it.
   */
  readonly discoveryHealth?: HealthReader;
  /** Accept JWT bearer tokens for agents, verified against this configuration. */
  readonly jwt?: JwtConfig;
  /**
   * The rules of outbound requests to URLs people configure (owner channels, reviewer and alert
   * webhooks, JWKS and token-exchange endpoints; `openOidcLogin` takes the same): the tool-egress
   * rules. `allowLoopback` is the admin's gateway-wide permission for
   * loopback receivers (`TOOLGATE_OUTBOUND_ALLOW_LOOPBACK=1` for serve); default false. `resolver` for tests.
   */
  readonly outbound?: OutboundOptions;
  /**
   * Be an OAuth 2.1 resource server (MCP authorization): accept access tokens of these
   * authorization servers, minted for this resource, mapped to agents, users and capabilities.
   */
  readonly oauth?: OAuthResourceServerConfig;
  /** A fixed policy engine instead of the stored policies (library use). */
  readonly policy?: PolicyEngine;
  /**
   * Seals the secrets store; loaded on first use. Default: TOOLGATE_MASTER_KEY or
   * TOOLGATE_MASTER_KEY_FILE (the CLI and serve also fall back to `<data dir>/master.key`). It
   * also seals operators' second-factor secrets.
   */
  readonly masterKey?: MasterKey | (() => MasterKey);
  /** Which environment's secrets calls use; default `default`. */
  readonly environment?: string;
  /** Sandbox drivers for `command` tools; default: process, namespace and gvisor on this host. */
  readonly sandbox?: SandboxService;
  /**
   * Host paths no sandbox may see: the data folder (keys, tokens, master key) and any file kept
   * outside it. Argv files, path roots and provider binds or workspaces inside one (or holding
   * one) are refused at registration and never run. The SQLite database's files are always added.
   */
  readonly protectedPaths?: readonly string[];
  /**
   * The egress proxy and http runtime; default: a proxy with lease sockets in a fresh private
   * folder and the system resolver. Tests pass their own (with a test CA or test targets).
   */
  readonly egress?: { readonly proxy: EgressProxy; readonly http: HttpToolRunner };
  /** Signs audit checkpoints (serve keeps it in the data folder); a throwaway key when absent. */
  readonly auditSigner?: NoteSigner | (() => NoteSigner);
  /** Checkpoint policy; `checkpoints: false` for read-only commands (verify, export of old data). */
  readonly audit?: {
    readonly checkpoints?: boolean;
    readonly checkpointEvery?: number;
    readonly checkpointIntervalMs?: number;
    readonly origin?: string;
    readonly onError?: (err: unknown) => void;
    /**
     * Campaign for the fleet's lead to run the audit sequencer (PostgreSQL only; `serve` does,
     * docs/architecture.md §5, "The audit log across replicas"). Default false: the sequencer
     * runs here only while this process leads for its other duties (detectors, probes), so an
     * embedding process never takes the lead from the replicas.
     */
    readonly sequencer?: boolean;
    /** The longest a staged audit record waits to be integrated (default 200 ms). */
    readonly integrationDelayMs?: number;
    /**
     * Days the classified store keeps a call's raw arguments (default 30); the sweep removes
     * older ones (docs/security-model.md, "Personal data and the audit log").
     */
    readonly classifiedRetentionDays?: number;
  };
  /** Detector thresholds, webhook and suspension (defaults: all on, none suspends); false: off. */
  readonly detectors?: DetectorsConfigInput | false;
  /** Notification webhooks and the console's public URL their links use; none by default. */
  readonly notify?: NotifyConfigInput;
  /** Teams that own tools, for the orphaned-tools report (agent owners and users count too). */
  readonly teams?: readonly string[];
  /**
   * Owner notices: the scheduled check's period (default 0: no timer; `serve` sets one), the
   * dedupe window, the per-team cap, the retire lead time, the orphans' fallback team and the
   * error-rate window.
   */
  readonly owners?: Partial<OwnerNoticesOptions>;
  /**
   * Per-agent caps on open sessions (and one token user's share of them) and pending approvals
   * (and, at the same share, one principal's of them) (defaults: 64, 0.5 and 50).
   */
  readonly caps?: Partial<AgentCaps>;
  /**
   * What waits for a reviewer once instruction-like text entered a session through an untrusted
   * result (rule `provenance.injection_seen`, docs/architecture.md §3 step `approval`): calls of these
   * action classes and reads of these data-access levels. Default: every state-changing class,
   * no reads; `{ action_classes: [] }` switches the rule off.
   */
  readonly afterInjection?: Partial<AfterInjection>;
  /**
   * Operators' passkeys (docs/architecture.md §6): the relying party behind TLS (`passkeys.rp_id`
   * and `passkeys.origin`; none: only a console opened at http://localhost), the name
   * authenticators show, and whether irreversible and permission-changing decisions need one
   * (`passkeys.require_for_irreversible`: a TOTP code is then refused for them; a security
   * review's approval counts as permission-changing).
   */
  readonly passkeys?: {
    readonly relyingParty?: RelyingParty | null;
    readonly rpName?: string;
    /** Undefined: what a start recorded for the organisation stands (true or false sets it). */
    readonly required?: boolean | undefined;
  };
  /**
   * Operators: the second factor local logins check (none: no local login succeeds), and the
   * login rate limit and the Argon2id cost of password hashes (tests lower them).
   */
  readonly operators?: {
    readonly secondFactor?: SecondFactorCheck;
    readonly loginLimits?: NonNullable<OperatorServiceOptions['loginLimits']>;
    readonly passwordHash?: NonNullable<OperatorServiceOptions['passwordHash']>;
  };
  /**
   * The health monitor (C14): probe intervals by tier, breaker, thresholds, scheduler bounds
   * (defaults in src/operations/health/health-config.ts); `false` starts no probes (state comes from live
   * calls only).
   */
  readonly health?: HealthConfigInput | false;
  /**
   * Tracing (docs/operations.md, "Tracing"): where spans are exported; none (the default) is off,
   * and the OpenTelemetry SDK is then never loaded. `serve` reads it from the OTEL_* variables
   * (`tracingConfigFromEnv`).
   */
  readonly tracing?: TracingConfig | null;
  /** Upstream MCP processes: how many may live at once (default 64). */
  readonly providers?: {
    readonly maxLive?: number;
    readonly onError?: (err: unknown) => void;
    /** Egress rules for HTTP providers; tests pass a resolver, test targets and a test CA. */
    readonly http?: CheckedFetchOptions;
  };
}

/** The clock as the services' options take it: absent unless one is given. */
export function clockOf(options: ToolgateOptions): { clock?: Clock } {
  return options.clock ? { clock: options.clock } : {};
}

/** The clock itself: the given one, else the system's. */
export function systemClockOf(options: ToolgateOptions): Clock {
  return options.clock ?? systemClock;
}
