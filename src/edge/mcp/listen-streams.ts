/**
 * @module The 2026-07-28 `subscriptions/listen` streams of /mcp, grouped by principal: each
 * principal's streams subscribe to a bus of their own, and a catalog or identity change is
 * published only to the principals whose permitted set moved, as a 2025 session is notified only
 * of its own (list-changed.ts). No agent hears when, or how often, another agent's grants change.
 */
import {
  InMemoryServerEventBus,
  type McpHttpHandler,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import type { AgentApi } from '../../api/index.js';
import type { AgentPrincipal } from '../../core/index.js';
import type { DefaultRuns } from './run-meta.js';

interface Group {
  readonly principal: AgentPrincipal;
  readonly bus: InMemoryServerEventBus;
  readonly handler: McpHttpHandler;
  /** The permitted set the principal's streams last heard of (null: it could not be read). */
  set: Promise<string | null>;
  /** Listen requests being served now: their streams may not have subscribed yet. */
  pending: number;
}

function keyOf(p: AgentPrincipal): string {
  return JSON.stringify([p.agentId, p.credential ?? null, p.user?.id ?? null]);
}

export class ListenStreams {
  readonly #agent: AgentApi;
  readonly #runs: DefaultRuns;
  readonly #handlerFor: (bus: ServerEventBus) => McpHttpHandler;
  readonly #groups = new Map<string, Group>();

  /** `handlerFor` builds the entry that serves one principal's listens on its own bus. */
  constructor(
    agent: AgentApi,
    runs: DefaultRuns,
    handlerFor: (bus: ServerEventBus) => McpHttpHandler,
  ) {
    this.#agent = agent;
    this.#runs = runs;
    this.#handlerFor = handlerFor;
  }

  /** Serves one `subscriptions/listen` of `principal` on its principal's bus. */
  async serve(principal: AgentPrincipal, request: Request, message: unknown): Promise<Response> {
    const key = keyOf(principal);
    let group = this.#groups.get(key);
    if (!group) {
      const bus = new InMemoryServerEventBus();
      // The baseline: what the set is as the first stream opens; a later change is compared to it.
      group = {
        principal,
        bus,
        handler: this.#handlerFor(bus),
        set: permittedSetOf(this.#agent, this.#runs, principal),
        pending: 0,
      };
      this.#groups.set(key, group);
    }
    group.pending += 1;
    try {
      await group.set;
      return await group.handler.fetch(request, { parsedBody: message });
    } finally {
      group.pending -= 1;
    }
  }

  /**
   * The catalog or identity moved: each listening principal whose permitted set moved hears
   * `notifications/tools/list_changed`, once; a principal with no stream left is forgotten.
   */
  async moved(): Promise<void> {
    for (const [key, group] of [...this.#groups]) {
      if (group.pending === 0 && group.bus.listenerCount === 0) {
        this.#groups.delete(key);
        await group.handler.close();
        continue;
      }
      const before = await group.set;
      const now = await permittedSetOf(this.#agent, this.#runs, group.principal);
      if (now === null || now === before) continue;
      group.set = Promise.resolve(now);
      group.handler.notify.toolsChanged();
    }
  }

  async close(): Promise<void> {
    const groups = [...this.#groups.values()];
    this.#groups.clear();
    await Promise.all(groups.map((g) => g.handler.close()));
  }
}

/**
 * The principal's permitted set as its default run holds it, brought up to date (as a 2026
 * tools/list does first), with the tools as listed, to compare with what it had; null when it
 * cannot be read (a run refused, an agent disabled).
 */
export async function permittedSetOf(
  agent: Pick<AgentApi, 'sessions'>,
  defaults: DefaultRuns,
  principal: AgentPrincipal,
): Promise<string | null> {
  const runs = defaults.for(principal);
  let handle: string | null = null;
  try {
    handle = (await runs.resolve(undefined)).handle;
    await agent.sessions.refresh(handle, principal);
    const row = await agent.sessions.require(handle, principal);
    // What tools/list shows too: a lifecycle step (a deprecation) moves no tool in or out of the
    // set but changes the listed tool, which a client caching the list must hear of.
    const listed = await agent.sessions.exportTools(handle, principal, 'mcp', true);
    return `${row.tool_set}\u0000${row.withheld}\u0000${JSON.stringify(listed)}`;
  } catch {
    // A refused default run is not asked again: the next look mints a fresh one.
    if (handle !== null) runs.forget(handle);
    return null;
  }
}
