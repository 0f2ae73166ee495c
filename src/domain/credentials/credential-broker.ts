/**
 * @module The credential broker (C11): called by the gate only after every check
 * passed, it opens the calling tool's own secret and says how to inject it (environment
 * variables, request headers, or a minted per-call JWT), which exact values to scrub from
 * whatever the tool returns, and which hosts the credential is meant for.
 *
 * Binding: a secret belongs to a tool. It is looked up by the calling tool's id together with the
 * name its definition gives, so a tool that names another tool's secret finds nothing of its own
 * and gets nothing: there is no way to address a secret across tools.
 */

import { type Clock, isToolgateError, systemClock, ToolgateError } from '../../core/index.js';
import type { ToolDefinition } from '../catalog/index.js';
import { DEFAULT_CALL_TOKEN_TTL_S, MIN_SIGNING_KEY_BYTES, mintCallToken } from './call-token.js';
import { DEFAULT_ENVIRONMENT, type SecretsService } from './secrets-service.js';
import type { SubjectTokens } from './subject-tokens.js';
import { TokenExchangeError, type TokenExchanger } from './token-exchange.js';

export interface CredentialRequest {
  readonly tool: ToolDefinition;
  /** The user the session acts for, if any; the minted token's subject. */
  readonly userId: string | null;
  /** The agent making the call; the subject when there is no user. */
  readonly agentId?: string;
  readonly sessionId: string;
  readonly callId: string;
  /** The credential the session was opened with: whose subject token a token exchange uses. */
  readonly credential?: string | null;
  /** Default `default`. */
  readonly environment?: string;
}

export interface CallCredentials {
  readonly env: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  /** Exact values to scrub from output, stderr and logs (see redactSecrets). */
  readonly redact: readonly string[];
  /** The hosts the credential may be sent to: the tool's egress hosts. */
  readonly audience: readonly string[];
}

export interface CredentialBrokerOptions {
  readonly clock?: Clock;
  /** Lifetime of minted call tokens, at most 300 s; default 120 s. */
  readonly tokenTtlSeconds?: number;
  /** The environment used when a request names none; default `default`. */
  readonly environment?: string;
  /**
   * OAuth token exchange (RFC 8693): tools it covers get a token for their upstream, exchanged
   * for the calling user's access token (`subjects`), never a stored secret.
   */
  readonly exchange?: { readonly exchanger: TokenExchanger; readonly subjects: SubjectTokens };
}

/**
 * Variables that steer the loader, the interpreter, the shell or the way out (proxy, CA
 * certificates): a secret injected under one of these names would change how the tool runs or
 * where its traffic goes, not just what it can authenticate as.
 */
const RESERVED_ENV = new Set([
  'PATH',
  'HOME',
  'USER',
  'SHELL',
  'PWD',
  'TMPDIR',
  'IFS',
  'ENV',
  'BASH_ENV',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_EXTRA_CA_CERTS',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PERL5LIB',
  'PERL5OPT',
  'RUBYOPT',
  'RUBYLIB',
  'GCONV_PATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'FTP_PROXY',
]);
const RESERVED_ENV_PREFIXES = ['LD_', 'DYLD_', 'TOOLGATE_'];

/** Headers that frame the request or route it; a credential has no business in them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'expect',
  'forwarded',
]);
const RESERVED_HEADER_PREFIXES = ['proxy-', 'x-forwarded-'];

export function isReservedEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return RESERVED_ENV.has(upper) || RESERVED_ENV_PREFIXES.some((p) => upper.startsWith(p));
}

export function isReservedHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS.has(lower) || RESERVED_HEADER_PREFIXES.some((p) => lower.startsWith(p));
}

const NOTHING: Omit<CallCredentials, 'audience'> = { env: {}, headers: {}, redact: [] };

export class CredentialBroker {
  readonly #secrets: SecretsService;
  readonly #clock: Clock;
  readonly #ttl: number;
  readonly #environment: string;
  readonly #exchange: CredentialBrokerOptions['exchange'];

  constructor(secrets: SecretsService, options: CredentialBrokerOptions = {}) {
    this.#exchange = options.exchange;
    this.#secrets = secrets;
    this.#clock = options.clock ?? systemClock;
    this.#ttl = options.tokenTtlSeconds ?? DEFAULT_CALL_TOKEN_TTL_S;
    this.#environment = options.environment ?? DEFAULT_ENVIRONMENT;
  }

  /**
   * The credentials for one call of `tool`, which must have passed the gate. A tool without
   * `credentials` gets nothing. Throws CREDENTIAL_UNAVAILABLE (never returns partial
   * credentials) when the secret is missing, unreadable or cannot be injected as declared.
   */
  async forCall(request: CredentialRequest): Promise<CallCredentials> {
    const { tool } = request;
    const audience = tool.egress.mode === 'constrained' ? [...tool.egress.hosts] : [];
    const ref = tool.credentials;
    if (!ref) return { ...NOTHING, audience };

    const unavailable = (reason: string, message: string) =>
      new ToolgateError('CREDENTIAL_UNAVAILABLE', message, {
        toolId: tool.id,
        secret: ref.secret,
        reason,
      });

    const target =
      ref.inject === 'minted_jwt' && tool.runtime.kind === 'http' ? 'header' : ref.inject;
    const asHeader = ref.inject === 'header' || target === 'header';
    if (asHeader ? isReservedHeaderName(ref.as) : isReservedEnvName(ref.as)) {
      throw unavailable(
        'reserved_target',
        `tool ${tool.id} asks for its credential in ${asHeader ? 'header' : 'environment variable'} ${ref.as}, which toolgate reserves; the tool was not run`,
      );
    }

    if (this.#exchange?.exchanger.covers(tool.id)) {
      return this.#exchanged(request, ref, unavailable, audience);
    }

    const environment = request.environment ?? this.#environment;
    let secret: { value: string; version: number } | null;
    try {
      // The tool's own id scopes the lookup: this is what keeps tool B away from tool A's secret.
      secret = await this.#secrets.open({ toolId: tool.id, name: ref.secret, environment });
    } catch (err) {
      if (isToolgateError(err) && err.code === 'MASTER_KEY_INVALID') {
        throw unavailable(
          'master_key',
          `the credential of tool ${tool.id} cannot be opened: ${err.message}`,
        );
      }
      if (isToolgateError(err) && err.code === 'SECRET_UNREADABLE') {
        throw unavailable('unreadable', err.message);
      }
      throw err;
    }
    if (!secret) {
      throw unavailable(
        'missing',
        `tool ${tool.id} needs secret ${ref.secret} in environment ${environment}, which is not set: \`toolgate secrets set ${ref.secret} --tool ${tool.id} --env ${environment}\``,
      );
    }

    if (ref.inject === 'env') {
      return { env: { [ref.as]: secret.value }, headers: {}, redact: [secret.value], audience };
    }
    if (ref.inject === 'header') {
      return { env: {}, headers: { [ref.as]: secret.value }, redact: [secret.value], audience };
    }

    if (Buffer.byteLength(secret.value, 'utf8') < MIN_SIGNING_KEY_BYTES) {
      throw unavailable(
        'weak_signing_key',
        `secret ${ref.secret} of tool ${tool.id} signs call tokens and must be at least ${MIN_SIGNING_KEY_BYTES} bytes`,
      );
    }
    const subject =
      request.userId ?? (request.agentId !== undefined ? `agent:${request.agentId}` : 'anonymous');
    const { token } = await mintCallToken(
      secret.value,
      {
        subject,
        audience: audience.length > 0 ? audience : [tool.id],
        toolId: tool.id,
        toolVersion: tool.version,
        sessionId: request.sessionId,
        callId: request.callId,
        ...(request.agentId !== undefined ? { agentId: request.agentId } : {}),
      },
      this.#clock(),
      this.#ttl,
    );
    // The long-lived key stays here; it is still scrubbed in case the tool got it some other way.
    const redact = [token, secret.value];
    if (target === 'header') {
      const value = ref.as.toLowerCase() === 'authorization' ? `Bearer ${token}` : token;
      return { env: {}, headers: { [ref.as]: value }, redact, audience };
    }
    return { env: { [ref.as]: token }, headers: {}, redact, audience };
  }

  /**
   * The upstream token of a tool covered by token exchange. Fails closed: no user access token
   * for this session's principal, or an AS that refuses, is CREDENTIAL_UNAVAILABLE — never a
   * fallback to a stored secret, never the caller's own token.
   */
  async #exchanged(
    request: CredentialRequest,
    ref: NonNullable<ToolDefinition['credentials']>,
    unavailable: (reason: string, message: string) => ToolgateError,
    audience: readonly string[],
  ): Promise<CallCredentials> {
    const { tool } = request;
    if (ref.inject !== 'header' || tool.runtime.kind !== 'http') {
      throw unavailable(
        'exchange_needs_http_header',
        `tool ${tool.id} is configured for token exchange, which only an http tool's header takes`,
      );
    }
    const subject =
      this.#exchange && request.credential && request.userId
        ? this.#exchange.subjects.get(request.credential, request.userId)
        : null;
    if (!this.#exchange || subject === null) {
      throw unavailable(
        'no_subject_token',
        `tool ${tool.id} runs on a token exchanged for the user's OAuth access token, and this session holds none`,
      );
    }
    let token: string;
    try {
      token = await this.#exchange.exchanger.exchange(tool.id, subject);
    } catch (err) {
      if (err instanceof TokenExchangeError) throw unavailable(err.reason, err.message);
      throw err;
    }
    const value = ref.as.toLowerCase() === 'authorization' ? `Bearer ${token}` : token;
    // Both are scrubbed from whatever the tool returns: the exchanged token it was given, and the
    // caller's own in case it reached the tool some other way.
    return { env: {}, headers: { [ref.as]: value }, redact: [token, subject.token], audience };
  }
}
