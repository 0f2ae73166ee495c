/**
 * @module The step-up challenge of a tool call whose OAuth token's scopes do not reach the tool
 * (MCP authorization, RFC 6750 §3.1): the `WWW-Authenticate: Bearer error="insufficient_scope",
 * scope=…` header and the INSUFFICIENT_SCOPE error, the same for every front that calls a tool
 * (MCP tools/call in both eras, REST calls).
 */
import { ToolgateError } from '../../../core/index.js';
import type { JwtIdentity } from '../jwt-verifier.js';
import { bearerChallenge } from './bearer-challenge.js';

/** What the check needs of the resource server: where its metadata is, and the scope look-up. */
export interface StepUpSource {
  readonly metadataUrl: string;
  stepUp(identity: JwtIdentity, toolRef: unknown): Promise<string[] | null>;
}

export interface StepUp {
  /** The `WWW-Authenticate` value to send with the refusal. */
  readonly challenge: string;
  readonly error: ToolgateError<'INSUFFICIENT_SCOPE'>;
}

/**
 * The step-up refusal of a call to `toolRef`, or null when the call may go on to the gate: no
 * resource server, a caller that is not an OAuth token, or a token whose scopes cover the tool.
 */
export async function stepUpFor(
  oauth: StepUpSource | null | undefined,
  identity: JwtIdentity,
  toolRef: unknown,
): Promise<StepUp | null> {
  if (!oauth || !identity.oauth) return null;
  const scopes = await oauth.stepUp(identity, toolRef);
  if (!scopes) return null;
  return {
    challenge: bearerChallenge({
      resourceMetadata: oauth.metadataUrl,
      error: 'insufficient_scope',
      scope: scopes,
    }),
    error: new ToolgateError(
      'INSUFFICIENT_SCOPE',
      `this token's scopes do not cover the tool; ask for: ${scopes.join(' ')}`,
      { scope: scopes.join(' ') },
    ),
  };
}
