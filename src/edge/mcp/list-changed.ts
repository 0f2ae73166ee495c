/**
 * @module Keeps MCP sessions' tool sets current: when the catalog or an identity changes (a
 * grant, a lifecycle step, a quarantine, in this process or another), each open session's
 * permitted set is recomputed by the session service and, where it changed, the client gets
 * notifications/tools/list_changed (and the resources and prompts ones: governed entries are in
 * the same set). 2026-07-28 fronts (HTTP and stdio) have no sessions to refresh: they watch the
 * revisions (`watchRevisions`) and tell the `subscriptions/listen` streams of the principals whose
 * set moved (listen-streams.ts; stdio serves one principal).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AgentApi } from '../../api/index.js';
import type { McpBinding } from './gateway-server.js';

export interface WatchedSession {
  readonly server: Server;
  readonly binding: McpBinding;
}

/**
 * What a change of a permitted set is announced as: tools and the governed resources and prompts
 * share the set, so each change sends all three. A `subscriptions/listen` stream (2026-07-28)
 * announcing list changes sends these same methods.
 */
export const LIST_CHANGED_NOTIFICATIONS = [
  'notifications/tools/list_changed',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
] as const;

/** How often the revisions are read while any MCP session or listen stream may be open. */
const POLL_MS = 250;
/**
 * While the store announces revision changes (PostgreSQL `LISTEN/NOTIFY`), the revisions are
 * still read this often: the safety net, never what the notification's delay rests on.
 */
const FALLBACK_MS = 5_000;

export interface RevisionWatch {
  stop(): void;
}

/** Where announcements of a change come from (`AgentApi.revisionAnnouncements`); absent: poll. */
type Announced = Partial<Pick<AgentApi, 'revisionAnnouncements'>>;

/**
 * Runs `look` at each announcement that the revisions moved (another replica's change or this
 * process's) and, while announcements can arrive, every FALLBACK_MS; while they cannot (SQLite,
 * or the fleet's connection down), every POLL_MS. Never two looks at once: an announcement heard
 * during one runs another after it. `look` never rejects. Returns the stop.
 */
function lookOnChange(agent: Announced, look: () => Promise<void>): () => void {
  let busy = false;
  let again = false;
  let lookedAt = 0;
  const run = (): void => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    again = false;
    lookedAt = Date.now();
    void look().finally(() => {
      busy = false;
      if (again) run();
    });
  };
  const announcements = agent.revisionAnnouncements;
  const timer = setInterval(() => {
    if (announcements?.listening && Date.now() - lookedAt < FALLBACK_MS) return;
    run();
  }, POLL_MS);
  timer.unref();
  const unsubscribe = announcements?.onMoved(run) ?? (() => {});
  return () => {
    clearInterval(timer);
    unsubscribe();
  };
}

/**
 * Calls `onMoved` whenever the catalog or identity revision moves past the one read at start:
 * resolves once that first read is in, so a change made after it is never taken for the
 * baseline. Then a read at each announcement of a change (lookOnChange), none once stopped. A
 * failed read is skipped (the next one catches up); errors go to `onError`.
 */
export async function watchRevisions(
  agent: Pick<AgentApi, 'revisions'> & Announced,
  onMoved: () => void | Promise<void>,
  onError: (err: unknown) => void,
): Promise<RevisionWatch> {
  const key = (r: { catalog: number; identity: number }) => `${r.catalog}:${r.identity}`;
  let last: string | null = await agent.revisions().then(key, (err: unknown) => {
    onError(err);
    return null;
  });
  const stop = lookOnChange(agent, async () => {
    try {
      const now = key(await agent.revisions());
      const moved = last !== null && now !== last;
      last = now;
      if (moved) await onMoved();
    } catch (err) {
      onError(err);
    }
  });
  return { stop };
}

export class ListChangedWatcher {
  readonly #agent: AgentApi;
  readonly #sessions: () => Iterable<WatchedSession>;
  readonly #onError: (err: unknown) => void;
  #stop: (() => void) | null = null;
  #last: string | null = null;
  #busy = false;
  /** Sessions of an agent disabled or removed since they opened: no longer refreshed. */
  readonly #ended = new Set<string>();

  constructor(
    agent: AgentApi,
    sessions: () => Iterable<WatchedSession>,
    onError: (err: unknown) => void,
  ) {
    this.#agent = agent;
    this.#sessions = sessions;
    this.#onError = onError;
  }

  start(): void {
    this.#stop ??= lookOnChange(this.#agent, () => this.check());
  }

  stop(): void {
    this.#stop?.();
    this.#stop = null;
  }

  /** One look at the revisions; refreshes every session when they moved. Never throws. */
  async check(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const r = await this.#agent.revisions();
      const now = `${r.catalog}:${r.identity}`;
      // The first look compares every session with the catalog as it is now: a change between a
      // session's opening and this look is not missed.
      if (now === this.#last) return;
      this.#last = now;
      const sessions = [...this.#sessions()];
      const open = new Set(sessions.map((s) => s.binding.sessionId));
      for (const id of this.#ended) if (!open.has(id)) this.#ended.delete(id);
      for (const session of sessions) {
        if (this.#ended.has(session.binding.sessionId)) continue;
        try {
          const { changed } = await this.#agent.sessions.refresh(
            session.binding.sessionId,
            session.binding.principal,
          );
          if (changed) {
            // Whichever moved, the client lists all three again (LIST_CHANGED_NOTIFICATIONS).
            for (const method of LIST_CHANGED_NOTIFICATIONS) {
              await session.server.notification({ method });
            }
          }
        } catch (err) {
          // An ended session or a closed stream concerns that session only.
          const code = (err as { code?: string }).code;
          if (code === 'AGENT_NOT_FOUND') {
            // Its agent was disabled (or removed): its calls are refused by the gate; said once.
            this.#ended.add(session.binding.sessionId);
            this.#onError(
              new Error(
                `agent ${session.binding.principal.agentId} is disabled or removed: MCP session ${session.binding.sessionId} is no longer refreshed`,
              ),
            );
          } else if (code !== 'SESSION_NOT_FOUND') this.#onError(err);
        }
      }
    } catch (err) {
      this.#onError(err);
    } finally {
      this.#busy = false;
    }
  }
}
