/**
 * @module The outcome of a call its principal made under an idempotency key, as the key's owner may
 * ask for it (`GET /v1/sessions/:id/idempotency/:key`, the client SDK after its own retry was told
 * the first call has not finished). The key is scoped as the gate scopes it — the agent, the
 * session's user, the tool as the caller's own session names it — so another principal, a tool
 * outside the caller's set, a key never used and an expired one are the same answer:
 * IDEMPOTENCY_KEY_NOT_FOUND. Nothing here says "use a new key".
 */
import { ToolgateError } from '../../core/index.js';
import { type IdempotencyOwner, idempotencyScope } from './idempotency-scope.js';
import { type IdempotencyStore, isIdempotencyKey, type KeyOutcome } from './idempotency-store.js';

/** What an agent is told about one of its keys (AgentCallOutcome in api/). */
export interface KeyOutcomeView {
  readonly idempotency_key: string;
  readonly tool: string;
  readonly state: KeyOutcome['state'];
  readonly call_id: string;
  readonly output?: unknown;
  readonly trust?: unknown;
  readonly error?: { readonly code: string; readonly rule: string; readonly message: string };
}

/** Who owns the key, and the session's tools (the names its calls were made by). */
export interface KeyOwner extends IdempotencyOwner {
  readonly tools: readonly { readonly id: string; readonly name: string }[];
}

export async function keyOutcome(
  records: IdempotencyStore,
  owner: KeyOwner,
  toolName: string,
  key: string,
): Promise<KeyOutcomeView> {
  if (!isIdempotencyKey(key)) {
    throw new ToolgateError(
      'INPUT_INVALID',
      'idempotency key must be 1–128 letters, digits, _ . : -',
      {
        problems: [
          {
            pointer: '/params/key',
            message: 'must be 1–128 of A-Z a-z 0-9 _ . : -',
            rule: 'idempotency.key',
          },
        ],
      },
    );
  }
  const notFound = () =>
    new ToolgateError(
      'IDEMPOTENCY_KEY_NOT_FOUND',
      'no call of yours under this idempotency key for this tool',
      { tool: toolName, idempotencyKey: key },
    );
  const entry = owner.tools.find((t) => t.name === toolName || t.id === toolName);
  if (!entry) throw notFound();
  const found = await records.outcome(idempotencyScope(owner, entry.id, key));
  if (found === null) throw notFound();
  const base = { idempotency_key: key, tool: toolName, call_id: found.callId };
  switch (found.state) {
    case 'succeeded':
      return {
        ...base,
        state: 'succeeded',
        output: found.output,
        ...(found.trust !== null ? { trust: found.trust } : {}),
      };
    case 'failed':
      return {
        ...base,
        state: 'failed',
        error: {
          code: found.failure.code,
          rule: found.failure.rule,
          message: found.failure.message,
        },
      };
    case 'running':
    case 'unknown':
      return { ...base, state: found.state };
  }
}
