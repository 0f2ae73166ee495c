/**
 * @module An OAuth access token's scopes narrow each request, never the session or run it opened
 * (docs/agents-and-identity.md, "Scopes narrow, never widen"). A session of an OAuth user holds
 * what the agent's grants allow any token of this gateway (`oauthReach`: the capabilities some
 * configured scope maps to), with tier, lifecycle and the toxic combination as for anyone; each
 * request sees that set narrowed by the capabilities its own token's scopes map to. So a
 * step-up — a wider token of the same principal — runs in the session or run it already has,
 * and a narrower token lists only what it covers; no token reaches past the grants. Calls are
 * decided by the gate (its `scope` step refuses a granted tool the token does not cover); this
 * file is what the lists and the grant check read.
 */
import type { AgentPrincipal } from '../../core/index.js';
import type { ToolVersionDetail } from '../catalog/index.js';
import { parseOAuthUserId } from '../identity/index.js';
import type { SessionPin, SessionTool } from './session-tool.js';

/**
 * What a session of an OAuth user keeps in `user_permissions`: only that a token vouched for the
 * user (the session-principal check reads that), never that token's permissions.
 */
export const OAUTH_SESSION_PERMISSIONS = '[]';

/** Every capability some configured scope maps to: the most any OAuth token here can hold. */
export function oauthReach(scopes: Readonly<Record<string, readonly string[]>>): string[] {
  return [...new Set(Object.values(scopes).flat())].sort();
}

/** Whether a session acts for an OAuth user: its set is token-free, each request narrows it. */
export function isOAuthSession(row: { readonly user_id: string | null }): boolean {
  return row.user_id !== null && parseOAuthUserId(row.user_id) !== null;
}

/** The capabilities this request's OAuth token covers; null for any other caller. */
export function tokenCapabilities(who: string | AgentPrincipal): readonly string[] | null {
  return typeof who !== 'string' && who.oauth && who.user ? who.user.permissions : null;
}

/**
 * The user permissions narrowing a session's grants on this request, as `capabilities` takes
 * them (null: the configured user's, read from the store). An OAuth session's are the request's
 * token's (`token`); with none (a refresh of the stored set) they are `ceiling`
 * (`SessionService.oauthCeiling`: the most any token of this gateway holds), so the stored set
 * never depends on a token. A JWT user's are what its token stated when it opened.
 */
export function sessionPermissions(
  row: { readonly user_id: string | null; readonly user_permissions: string | null },
  token: readonly string[] | null,
  ceiling: readonly string[],
): readonly string[] | null {
  if (isOAuthSession(row)) return token ?? ceiling;
  return row.user_permissions === null ? null : (JSON.parse(row.user_permissions) as string[]);
}

/** Whether a request narrowed to `token` (null: not narrowed) may see this tool version. */
export function tokenCovers(token: readonly string[] | null, detail: ToolVersionDetail): boolean {
  return token === null || detail.definition.required_capabilities.every((c) => token.includes(c));
}

/**
 * A session's tools as a request narrowed to `token` sees them (null: all of them): a tool whose
 * default version the token does not cover is left out, and so is each pinnable major it does not.
 */
export async function narrowTools(
  tools: readonly SessionTool[],
  token: readonly string[] | null,
  get: (id: string, version: string) => Promise<ToolVersionDetail>,
): Promise<SessionTool[]> {
  if (token === null) return [...tools];
  const covered = (id: string, version: string) =>
    get(id, version).then(
      (detail) => tokenCovers(token, detail),
      () => false,
    );
  const out: SessionTool[] = [];
  for (const t of tools) {
    if (!(await covered(t.id, t.version))) continue;
    const { pins, ...tool } = t;
    const kept: SessionPin[] = [];
    for (const pin of pins ?? []) if (await covered(t.id, pin.version)) kept.push(pin);
    out.push(kept.length > 0 ? { ...tool, pins: kept } : tool);
  }
  return out;
}
