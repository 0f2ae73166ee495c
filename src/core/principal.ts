/**
 * @module Who is calling: one principal, built once at the edge by the authenticator (an agent) or
 * by the operator sign-in (a person), and carried everywhere after. Nothing downstream re-derives
 * the caller from a token, a header or a session row; what the principal is allowed to do is read
 * by the gate (agents) or the operator authority (people) on each request, never stored in it
 * (docs/architecture.md §2, docs/security-model.md).
 */

/** The user a verified token acts for. */
export interface PrincipalUser {
  /**
   * A local user id (USER_ID_PATTERN) from an agent JWT, or `oauth:["<iss>","<sub>"]` from an
   * OAuth access token — never a bare subject.
   */
  readonly id: string;
  /** The permissions the token vouches for (an OAuth token: its scopes mapped to capabilities). */
  readonly permissions: readonly string[];
}

/** An agent: the caller of the agent API (REST agent routes, MCP over HTTP or stdio, library). */
export interface AgentPrincipal {
  readonly kind: 'agent';
  readonly agentId: string;
  /**
   * `key:<key id>` for an API key, `jwt:["<iss>","<sub>"]` for a JWT; absent for in-process
   * (library) callers. Sessions are bound to it.
   */
  readonly credential?: string;
  /** The user a verified token names; absent when the credential names no user. */
  readonly user?: PrincipalUser;
  /** Set for an OAuth access token: its issuer, scopes, and expiry (ms). */
  readonly oauth?: {
    readonly issuer: string;
    readonly scopes: readonly string[];
    readonly expiresAt: number;
  };
}

/**
 * A person: an operator account signed in through the console, the CLI or a REST admin
 * credential. Only the account id and how it was proven; roles and teams are read from the
 * account as it is, on each request, by the operator authority.
 */
export interface OperatorPrincipal {
  readonly kind: 'operator';
  readonly operatorId: string;
  /** How the account was proven: `password`, `oidc`, `token`, `bootstrap`, `local` … */
  readonly authenticatedBy: string;
  /** The front the request came through. */
  readonly via: 'cli' | 'rest' | 'console' | 'library';
}

export type Principal = AgentPrincipal | OperatorPrincipal;
