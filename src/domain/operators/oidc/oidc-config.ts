/**
 * @module Single sign-on configuration: what an OidcLogin is built from, checked whole at start
 * (every problem listed), and its reading from the TOOLGATE_OIDC_* environment.
 */
import {
  ASYMMETRIC_JWS_ALGS,
  endpointUrlProblem,
  isLoopbackHost,
  MAX_SECRET_FILE_BYTES,
  type Problem,
  problem,
  readBoundedFile,
  ToolgateError,
} from '../../../core/index.js';
import { OPERATOR_ROLES, type OperatorRole } from '../operator.js';

/** Asymmetric algorithms only (and `Ed25519`, the fully specified name of EdDSA on that curve). */
export const OIDC_ASYMMETRIC_ALGS = [...ASYMMETRIC_JWS_ALGS, 'Ed25519'] as const;

export interface OidcConfig {
  /** Compared exactly (no trailing-slash or case folding) with the discovery document's and every token's `iss`. */
  readonly issuer: string;
  readonly clientId: string;
  /** Confidential client (client_secret_basic) when set; a public client with PKCE otherwise. */
  readonly clientSecret?: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  /** Dotted path into the ID token's claims (`realm_access.roles`); a string or string array. */
  readonly rolesClaim: string;
  readonly teamsClaim: string;
  /**
   * Claim value → role. When set, only mapped values give roles (a provider group that happens to
   * be called `admin` gives nothing unless mapped); when absent, values equal to a role name do.
   */
  readonly roleMap?: Readonly<Record<string, OperatorRole>>;
  readonly allowedAlgs: readonly string[];
}

export interface OidcConfigInput {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret?: string | undefined;
  readonly redirectUri: string;
  readonly scopes?: readonly string[] | undefined;
  readonly rolesClaim?: string | undefined;
  readonly teamsClaim?: string | undefined;
  readonly roleMap?: Readonly<Record<string, string>> | undefined;
  readonly allowedAlgs?: readonly string[] | undefined;
}

export const DEFAULT_OIDC_SCOPES = ['openid', 'profile', 'email'] as const;
const DEFAULT_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
const CLAIM_PATH = /^[A-Za-z0-9_:\-/]+(\.[A-Za-z0-9_:\-/]+)*$/;

function isRole(value: string): value is OperatorRole {
  return (OPERATOR_ROLES as readonly string[]).includes(value);
}

/** Checks a configuration and fills the defaults; throws INPUT_INVALID listing every problem. */
export function resolveOidcConfig(input: OidcConfigInput): OidcConfig {
  const problems: Problem[] = [];
  // The issuer is only a URL here: where it may point is the outbound rules' (openOidcLogin
  // checks it, resolved, with the gateway's loopback setting), as for every request to it.
  const issuer = endpointUrlProblem(input.issuer);
  if (issuer) problems.push(problem('/issuer', `issuer ${issuer.message}`, 'oidc.url'));
  // The redirect URI is the gateway's own address, which the browser is sent to: https, or http
  // on loopback (a gateway tried out locally). Toolgate never sends a request to it.
  const redirect = endpointUrlProblem(input.redirectUri);
  if (redirect) {
    problems.push(problem('/redirectUri', `redirectUri ${redirect.message}`, 'oidc.url'));
  } else if (
    new URL(input.redirectUri).protocol !== 'https:' &&
    !isLoopbackHost(new URL(input.redirectUri).hostname)
  ) {
    problems.push(
      problem('/redirectUri', 'redirectUri must be https unless it is loopback', 'oidc.url'),
    );
  }
  if (!input.clientId) problems.push(problem('/clientId', 'clientId is required', 'oidc.client'));
  if (input.clientSecret === '')
    problems.push(problem('/clientSecret', 'clientSecret is empty', 'oidc.client'));
  const scopes = [...(input.scopes ?? DEFAULT_OIDC_SCOPES)];
  if (!scopes.includes('openid'))
    problems.push(problem('/scopes', 'scopes must include openid', 'oidc.scopes'));
  const rolesClaim = input.rolesClaim ?? 'roles';
  const teamsClaim = input.teamsClaim ?? 'groups';
  for (const [key, path] of [
    ['rolesClaim', rolesClaim],
    ['teamsClaim', teamsClaim],
  ] as const) {
    if (!CLAIM_PATH.test(path))
      problems.push(problem(`/${key}`, `${key} is not a dotted claim path`, 'oidc.claim'));
  }
  let roleMap: Record<string, OperatorRole> | undefined;
  if (input.roleMap !== undefined) {
    roleMap = {};
    for (const [value, role] of Object.entries(input.roleMap)) {
      if (typeof role === 'string' && isRole(role)) roleMap[value] = role;
      else
        problems.push(
          problem(
            `/roleMap/${value}`,
            `roleMap maps ${JSON.stringify(value)} to ${JSON.stringify(role)}, which is not one of ${OPERATOR_ROLES.join(', ')}`,
            'oidc.role_map',
          ),
        );
    }
  }
  const allowedAlgs = [...(input.allowedAlgs ?? DEFAULT_ALGS)];
  if (allowedAlgs.length === 0)
    problems.push(problem('/allowedAlgs', 'allowedAlgs is empty', 'oidc.algs'));
  for (const alg of allowedAlgs) {
    if (!(OIDC_ASYMMETRIC_ALGS as readonly string[]).includes(alg))
      problems.push(
        problem(
          '/allowedAlgs',
          `allowedAlgs holds ${alg}: only asymmetric algorithms (${OIDC_ASYMMETRIC_ALGS.join(', ')}) are accepted`,
          'oidc.algs',
        ),
      );
  }
  if (problems.length > 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `single sign-on configuration: ${problems.map((p) => p.message).join('; ')}`,
      { problems },
    );
  }
  return {
    issuer: input.issuer,
    clientId: input.clientId,
    ...(input.clientSecret !== undefined ? { clientSecret: input.clientSecret } : {}),
    redirectUri: input.redirectUri,
    scopes,
    rolesClaim,
    teamsClaim,
    ...(roleMap ? { roleMap } : {}),
    allowedAlgs,
  };
}

/** Where the console's single sign-on lands, under the gateway's public URL. */
export function defaultOidcRedirectUri(publicUrl: string): string {
  return new URL('/console/login/oidc/callback', publicUrl).toString();
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The configuration from TOOLGATE_OIDC_*; null when TOOLGATE_OIDC_ISSUER is unset (single sign-on
 * off). Throws INPUT_INVALID naming the variable for anything malformed.
 */
export function oidcConfigFromEnv(env: Env, publicUrl: string): OidcConfig | null {
  const issuer = env.TOOLGATE_OIDC_ISSUER;
  if (!issuer) {
    const stray = Object.keys(env).filter((k) => k.startsWith('TOOLGATE_OIDC_') && env[k]);
    if (stray.length > 0) throw envError(`${stray.join(', ')} set without TOOLGATE_OIDC_ISSUER`);
    return null;
  }
  const clientId = env.TOOLGATE_OIDC_CLIENT_ID;
  if (!clientId) throw envError('TOOLGATE_OIDC_CLIENT_ID is required with TOOLGATE_OIDC_ISSUER');
  let clientSecret = env.TOOLGATE_OIDC_CLIENT_SECRET;
  const secretFile = env.TOOLGATE_OIDC_CLIENT_SECRET_FILE;
  if (secretFile) {
    if (clientSecret !== undefined)
      throw envError(
        'set TOOLGATE_OIDC_CLIENT_SECRET or TOOLGATE_OIDC_CLIENT_SECRET_FILE, not both',
      );
    // Missing, not a regular file or over 1 MiB: INPUT_INVALID naming the variable.
    clientSecret = readBoundedFile(secretFile, {
      option: 'TOOLGATE_OIDC_CLIENT_SECRET_FILE',
      maxBytes: MAX_SECRET_FILE_BYTES,
    }).trim();
  }
  let roleMap: Record<string, string> | undefined;
  const rawMap = env.TOOLGATE_OIDC_ROLE_MAP;
  if (rawMap) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawMap);
    } catch {
      throw envError('TOOLGATE_OIDC_ROLE_MAP is not JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw envError('TOOLGATE_OIDC_ROLE_MAP must be a JSON object of claim value → role');
    roleMap = {};
    for (const [k, v] of Object.entries(parsed)) roleMap[k] = typeof v === 'string' ? v : String(v);
  }
  return resolveOidcConfig({
    issuer,
    clientId,
    clientSecret,
    redirectUri: env.TOOLGATE_OIDC_REDIRECT_URI || defaultOidcRedirectUri(publicUrl),
    rolesClaim: env.TOOLGATE_OIDC_ROLES_CLAIM || undefined,
    teamsClaim: env.TOOLGATE_OIDC_TEAMS_CLAIM || undefined,
    roleMap,
  });
}

function envError(message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, { problems: [] });
}
