/**
 * @module Who may use a session: the full principal that opened it — agent, the user a token
 * vouched for, and the credential (API key id, or JWT issuer + subject). A session id is a
 * bearer secret only together with that principal: another user or credential of the same agent
 * presenting it is refused as if the session did not exist, and the attempt is audited.
 */
import { type AgentPrincipal, type Clock, systemActor } from '../../core/index.js';
import { appendEvent, type SessionRow, type Store } from '../../records/store/index.js';

/** A bare agent id is an in-process caller: it matches only sessions opened without a credential. */
export function asPrincipal(who: string | AgentPrincipal): AgentPrincipal {
  return typeof who === 'string' ? { kind: 'agent', agentId: who } : who;
}

/**
 * Exact comparison of every part. A token user is recorded as the session's user with the token's
 * permissions (user_permissions not null); a session whose user came from `on_behalf_of` has none,
 * so a token naming a user can never take over an `on_behalf_of` session, nor the reverse.
 */
export function principalMatches(row: SessionRow, who: AgentPrincipal): boolean {
  if (row.agent_id !== who.agentId) return false;
  if ((row.credential ?? undefined) !== who.credential) return false;
  if (who.user === undefined) return row.user_permissions === null;
  return row.user_permissions !== null && row.user_id === who.user.id;
}

/** Records that a live session was presented by someone else (never tells the presenter). */
export async function auditPrincipalMismatch(
  store: Pick<Store, 'db'>,
  row: SessionRow,
  who: AgentPrincipal,
  clock: Clock,
): Promise<void> {
  await appendEvent(store.db, systemActor('session-binding'), clock(), {
    action: 'session.principal_mismatch',
    subject: `session:${row.id}`,
    details: {
      presented: {
        agent: who.agentId,
        user: who.user?.id ?? null,
        credential: who.credential ?? null,
      },
      bound: {
        agent: row.agent_id,
        user: row.user_id,
        credential: row.credential,
      },
    },
  });
}
