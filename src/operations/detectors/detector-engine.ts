/**
 * @module The detector engine (C13): consumes every committed audit record, off the
 * call path, resolves the tool and agent facts detectors need, runs each enabled detector and
 * answers every alert with an audit record (kind `alert`), an event, a webhook and, where
 * configured, the session's suspension. Bounded: a backlog past MAX_QUEUE drops records (counted).
 */
import { randomBytes } from 'node:crypto';
import { type Clock, type Outbound, systemClock } from '../../core/index.js';
import type { CatalogService, ToolVersionDetail } from '../../domain/catalog/index.js';
import type { AgentService } from '../../domain/identity/index.js';
import type { SessionService } from '../../domain/sessions/index.js';
import type { AuditRecord, AuditWriter } from '../../records/audit/index.js';
import { appendEvent, type Store } from '../../records/store/index.js';
import { BoundedMap } from './bounded-map.js';
import { DenyRateDetector } from './deny-rate.js';
import type { Alert, Detector, Observed, ToolFacts } from './detector.js';
import { isAttempt } from './detector.js';
import type { DetectorsConfig } from './detector-config.js';
import { EgressVolumeDetector } from './egress-volume.js';
import { CommittedLogFollower } from './log-follower.js';
import { NewDestinationDetector } from './new-destination.js';
import { OffHoursDetector } from './off-hours.js';
import { ReadOnlyWriteDetector } from './read-only-write.js';
import { ReadThenEgressDetector } from './read-then-egress.js';
import { type WebhookOutcome, WebhookSender } from './webhook.js';

/** Where the engine reports what it did (metrics); every method is optional to implement. */
export interface DetectorSink {
  alert?(alert: Alert, suspended: boolean): void;
  webhook?(outcome: WebhookOutcome): void;
  droppedRecords?(n: number): void;
  failure?(): void;
}

export interface DetectorEngineDependencies {
  readonly store: Store;
  readonly catalog: CatalogService;
  readonly agents: AgentService;
  readonly sessions: SessionService;
  readonly audit: AuditWriter;
  readonly config: DetectorsConfig;
  /** The egress rules the alert webhook goes out under (checked again at each delivery). */
  readonly outbound: Pick<Outbound, 'fetch'>;
  readonly clock?: Clock;
  readonly sink?: DetectorSink;
  /** Told of every alert with its id (notifications); must only enqueue, never wait or throw. */
  readonly onAlert?: (alert: Alert, id: string, suspended: boolean) => void;
}

const MAX_QUEUE = 10_000;
const OFFERED_TTL_MS = 5_000;
const AGENT_TTL_MS = 10_000;
const RECENT_ALERTS = 100;
const ACTOR = { id: 'system:detectors', via: 'system' } as const;

interface OfferedIndex {
  readonly at: number;
  /** Facts by tool id and by name (what a probe of a tool outside the session names). */
  readonly byRef: Map<string, ToolFacts>;
  readonly tools: ToolVersionDetail[];
}

function factsOf(d: ToolVersionDetail): ToolFacts {
  return { id: d.id, actionClass: d.action_class, dataAccess: d.data_access, egress: d.egress };
}

export function buildDetectors(config: DetectorsConfig): Detector[] {
  const all: [boolean, () => Detector][] = [
    [config.new_destination.enabled, () => new NewDestinationDetector(config.new_destination)],
    [config.read_then_egress.enabled, () => new ReadThenEgressDetector(config.read_then_egress)],
    [config.egress_volume.enabled, () => new EgressVolumeDetector(config.egress_volume)],
    [config.deny_rate.enabled, () => new DenyRateDetector(config.deny_rate)],
    [config.off_hours.enabled, () => new OffHoursDetector(config.off_hours)],
    [config.read_only_write.enabled, () => new ReadOnlyWriteDetector()],
  ];
  return all.filter(([on]) => on).map(([, make]) => make());
}

export class DetectorEngine {
  readonly #d: DetectorEngineDependencies;
  readonly #clock: Clock;
  #detectors: Detector[];
  /** Several replicas on one database: the elected leader reads the committed log instead. */
  readonly #follower: CommittedLogFollower | null;
  readonly #webhook: WebhookSender | null;
  readonly #tools = new BoundedMap<string, ToolFacts | null>(5_000);
  readonly #agentsReadOnly = new BoundedMap<string, { at: number; readOnly: boolean | null }>(
    10_000,
  );
  #offered: OfferedIndex | null = null;
  #queue: AuditRecord[] = [];
  #running: Promise<void> | null = null;
  #loaded: Promise<void> | null = null;
  readonly #recent: { alert: Alert; suspended: boolean }[] = [];

  constructor(deps: DetectorEngineDependencies) {
    this.#d = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#detectors = buildDetectors(deps.config);
    this.#follower = deps.store.fleet.shared
      ? new CommittedLogFollower({
          store: deps.store,
          process: (batch) => {
            this.#enqueue(batch);
            return this.#settle();
          },
          // A replica that starts leading starts afresh: its own detectors, the baselines read
          // from the log as it is now (docs/architecture.md §5, "Replicas that agree").
          onLead: async () => {
            this.#detectors = buildDetectors(deps.config);
            this.#queue = [];
            this.#loaded = this.#loadBaselines();
            await this.#loaded;
          },
          onError: () => this.#d.sink?.failure?.(),
          onSkipped: (n) => this.#d.sink?.droppedRecords?.(n),
        })
      : null;
    const url = deps.config.webhook.url;
    this.#webhook = url
      ? new WebhookSender({ ...deps.config.webhook, url, fetch: deps.outbound.fetch }, (o) =>
          deps.sink?.webhook?.(o),
        )
      : null;
    // Versions are immutable, so tool facts by id@version stay; what is offered changes.
    deps.catalog.onCommit(() => {
      this.#offered = null;
    });
  }

  /**
   * Loads baselines and starts consuming committed records: this process's own as they commit
   * when it serves the database alone; when replicas share it, every replica's, read from the
   * committed log by the fleet's leader only (log-follower.ts), so each alert is raised once.
   */
  start(): Promise<void> {
    if (this.#follower) {
      this.#follower.start();
      return Promise.resolve();
    }
    this.#d.audit.onCommitted((batch) => this.#enqueue(batch));
    this.#loaded ??= this.#loadBaselines();
    return this.#loaded;
  }

  /** Stops following the log (a replica that closes hands the detectors over). */
  stop(): void {
    this.#follower?.stop();
  }

  /** Whether this replica runs the detectors now (always when it serves the database alone). */
  get active(): boolean {
    return this.#follower?.leading ?? true;
  }

  #loadBaselines(): Promise<void> {
    const now = this.#clock();
    return Promise.all(
      this.#detectors.map((d) => d.load?.(this.#d.store.db, now) ?? Promise.resolve()),
    ).then(
      () => undefined,
      () => {
        // A baseline that cannot be loaded leaves the detector learning from live records.
        this.#d.sink?.failure?.();
      },
    );
  }

  /** The most recent alerts (bounded), newest last. */
  recentAlerts(): readonly { alert: Alert; suspended: boolean }[] {
    return [...this.#recent];
  }

  /**
   * Resolves when every record committed so far is processed, the alerts it raised are in the
   * chain (staged ones integrated: docs/architecture.md §5) and its webhooks settled.
   */
  async idle(): Promise<void> {
    await this.#follower?.caughtUp();
    await this.#settle();
    await this.#d.audit.flush();
    await this.#webhook?.settled();
  }

  /** Resolves when every record queued so far is processed. */
  async #settle(): Promise<void> {
    await this.#loaded;
    while (this.#running || this.#queue.length > 0) {
      this.#kick();
      await this.#running;
    }
  }

  #enqueue(batch: readonly AuditRecord[]): void {
    for (const r of batch) {
      if (r.kind === 'alert') continue;
      if (this.#queue.length >= MAX_QUEUE) {
        this.#d.sink?.droppedRecords?.(1);
        continue;
      }
      this.#queue.push(r);
    }
    this.#kick();
  }

  #kick(): void {
    this.#running ??= this.#drain().finally(() => {
      this.#running = null;
      if (this.#queue.length > 0) this.#kick();
    });
  }

  async #drain(): Promise<void> {
    await this.#loaded;
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      // Detection never holds the event loop: requests get their turn between batches.
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (const record of batch) {
        try {
          await this.#process(record);
        } catch {
          this.#d.sink?.failure?.();
        }
      }
    }
  }

  async #process(record: AuditRecord): Promise<void> {
    const tool = await this.#toolOf(record);
    const needsAgent =
      tool !== null && tool.actionClass !== 'read' && isAttempt(record) && record.agentId !== null;
    const observed: Observed = {
      record,
      tool,
      agentReadOnly: needsAgent && record.agentId ? await this.#readOnly(record.agentId) : null,
    };
    for (const detector of this.#detectors) {
      for (const alert of detector.observe(observed)) await this.#respond(alert);
    }
  }

  async #offeredIndex(): Promise<OfferedIndex> {
    const now = Date.now();
    if (!this.#offered || now - this.#offered.at > OFFERED_TTL_MS) {
      const tools = await this.#d.catalog.offered();
      const byRef = new Map<string, ToolFacts>();
      const pseudonyms = this.#d.audit.pseudonyms;
      for (const t of tools) {
        byRef.set(t.name, factsOf(t));
        byRef.set(t.id, factsOf(t));
        // The log keeps a probe's attempted name as its keyed hash (audit-pseudonyms.ts).
        byRef.set(pseudonyms.token(t.name), factsOf(t));
        byRef.set(pseudonyms.token(t.id), factsOf(t));
      }
      this.#offered = { at: now, byRef, tools };
    }
    return this.#offered;
  }

  async #toolOf(r: AuditRecord): Promise<ToolFacts | null> {
    if (r.toolId && r.toolVersion) {
      const key = `${r.toolId}@${r.toolVersion}`;
      const cached = this.#tools.get(key);
      if (cached !== undefined) return cached;
      const facts = await this.#d.catalog.get(r.toolId, r.toolVersion).then(factsOf, () => null);
      this.#tools.set(key, facts);
      return facts;
    }
    // A probe of a tool outside the session's set names it only in details.attempted (hashed).
    const attempted = r.details?.attempted;
    if (r.kind === 'call.denied' && typeof attempted === 'string') {
      return (await this.#offeredIndex()).byRef.get(attempted) ?? null;
    }
    return null;
  }

  async #readOnly(agentId: string): Promise<boolean | null> {
    const now = Date.now();
    const cached = this.#agentsReadOnly.get(agentId);
    if (cached && now - cached.at < AGENT_TTL_MS) return cached.readOnly;
    let readOnly: boolean | null = null;
    try {
      const agent = await this.#d.agents.get(agentId);
      const caps = new Set(agent.capabilities);
      const { tools } = await this.#offeredIndex();
      const unlocked = tools.filter((t) =>
        t.definition.required_capabilities.every((c) => caps.has(c)),
      );
      readOnly = unlocked.length > 0 && unlocked.every((t) => t.action_class === 'read');
    } catch {
      readOnly = null;
    }
    this.#agentsReadOnly.set(agentId, { at: now, readOnly });
    return readOnly;
  }

  /** Never throws: a failed response is counted and the rest of it still runs. */
  async #respond(alert: Alert): Promise<void> {
    const settings = this.#d.config[alert.detector];
    let suspended = false;
    if (settings.suspend && alert.sessionId) {
      suspended = await this.#d.sessions.suspend(alert.sessionId).catch(() => {
        this.#d.sink?.failure?.();
        return false;
      });
    }
    const id = `alert_${randomBytes(12).toString('base64url')}`;
    const details = { alert_id: id, detector: alert.detector, suspended, ...alert.details };
    this.#recent.push({ alert, suspended });
    if (this.#recent.length > RECENT_ALERTS) this.#recent.shift();
    this.#d.sink?.alert?.(alert, suspended);
    try {
      this.#d.onAlert?.(alert, id, suspended);
    } catch {
      this.#d.sink?.failure?.();
    }
    this.#webhook?.send({
      type: 'toolgate.alert',
      id,
      detector: alert.detector,
      at: alert.at.toISOString(),
      message: alert.message,
      session_id: alert.sessionId,
      run_id: alert.runId,
      agent_id: alert.agentId,
      user_id: alert.userId,
      tool_id: alert.toolId,
      tool_version: alert.toolVersion,
      suspended,
      details: alert.details,
    });
    await Promise.all([
      this.#d.audit
        .append({
          kind: 'alert',
          at: alert.at,
          callId: id,
          sessionId: alert.sessionId,
          runId: alert.runId,
          agentId: alert.agentId,
          userId: alert.userId,
          toolId: alert.toolId,
          toolVersion: alert.toolVersion,
          argsHash: null,
          argsRedacted: undefined,
          decision: 'none',
          rule: `detector.${alert.detector}`,
          message: alert.message,
          details,
        })
        .catch(() => this.#d.sink?.failure?.()),
      appendEvent(this.#d.store.db, ACTOR, this.#clock(), {
        action: 'alert.raised',
        subject: alert.sessionId ? `session:${alert.sessionId}` : `agent:${alert.agentId ?? ''}`,
        details: { ...details, message: alert.message },
      }).catch(() => this.#d.sink?.failure?.()),
    ]);
  }
}
