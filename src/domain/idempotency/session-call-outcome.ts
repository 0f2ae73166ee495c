/**
 * @module The outcome of the call a session's principal made under an idempotency key
 * (docs/architecture.md §6, `callOutcome`): asked for the caller's own session only, for a tool of
 * its set (as the request's OAuth token narrows it), under the principal's own scope.
 */
import type { AgentPrincipal } from '../../core/index.js';
import { parseToolRef } from '../catalog/index.js';
import type { SessionService } from '../sessions/index.js';
import type { IdempotencyStore } from './idempotency-store.js';
import { type KeyOutcomeView, keyOutcome } from './key-outcome.js';

export class SessionCallOutcomes {
  readonly #sessions: Pick<SessionService, 'require' | 'view'>;
  readonly #idempotency: IdempotencyStore;

  constructor(sessions: Pick<SessionService, 'require' | 'view'>, idempotency: IdempotencyStore) {
    this.#sessions = sessions;
    this.#idempotency = idempotency;
  }

  /** A session not the caller's is SESSION_NOT_FOUND; an unknown key IDEMPOTENCY_KEY_NOT_FOUND. */
  async outcome(
    sessionId: string,
    who: AgentPrincipal,
    tool: string,
    key: string,
  ): Promise<KeyOutcomeView> {
    const session = await this.#sessions.require(sessionId, who);
    // `name@1` names the same tool as `name`: a key is scoped to the tool, not its major.
    const ref = parseToolRef(tool);
    // The set as this request sees it: an OAuth token reads no outcome of a tool it does not cover.
    const { tools } = await this.#sessions.view(sessionId, who);
    return keyOutcome(
      this.#idempotency,
      {
        agentId: who.agentId,
        userId: session.user_id,
        credential: session.credential ?? null,
        tools,
      },
      ref?.name ?? tool,
      key,
    );
  }
}
