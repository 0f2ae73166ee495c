/**
 * @module One configuration file for how toolgate runs (docs/configuration.md "The configuration
 * file"): every `serve` setting and the global ones in one YAML or JSON file, `--config FILE` or
 * TOOLGATE_CONFIG. Each setting has an environment variable; the file only fills the variables
 * that are not set, before the command line is parsed, so a flag beats its variable and a
 * variable beats the file, and every reader of a variable keeps working unchanged. The table
 * below is the one source of the file's JSON Schema, of `toolgate config check` and of the
 * generated reference. Secrets are never values in the file: it names the files that hold them.
 */
import { dbUrlSecrets, OPERATOR_ROLES, settingsValidator } from '../../api/index.js';
import {
  MAX_SECRET_FILE_BYTES,
  type Problem,
  parseFileText,
  problem,
  readBoundedFile,
} from '../../core/index.js';
import { int, list, path, type Setting, str, strings, url } from './setting-kinds.js';
import { TRACING_SETTINGS } from './settings-tracing.js';

type Json = Record<string, unknown>;

export type { Setting };

export const SETTINGS: readonly Setting[] = [
  {
    path: 'data_dir',
    env: 'TOOLGATE_DATA_DIR',
    schema: path,
    description: 'the data folder (keys, token, SQLite database)',
  },
  {
    path: 'db',
    env: 'TOOLGATE_DB',
    schema: { type: 'string', pattern: '^(sqlite:|postgres(ql)?://)', maxLength: 4096 },
    description:
      'database: `sqlite:PATH` or `postgres://…` (put a password in a `.pgpass` file or `PGPASSFILE`, not here)',
  },
  {
    path: 'server.host',
    env: 'TOOLGATE_HOST',
    schema: str,
    description: 'interface `serve` binds',
  },
  {
    path: 'server.port',
    env: 'TOOLGATE_PORT',
    schema: int(0, 65_535),
    description: 'port `serve` listens on',
  },
  {
    path: 'server.public_url',
    env: 'TOOLGATE_PUBLIC_URL',
    schema: url,
    description: 'where operators reach the gateway (console links, single sign-on redirect)',
  },
  {
    path: 'server.body_limit',
    env: 'TOOLGATE_BODY_LIMIT',
    schema: int(1024, 1_073_741_824),
    description: 'largest request body, bytes',
  },
  {
    path: 'server.allowed_origins',
    env: 'TOOLGATE_ALLOWED_ORIGINS',
    schema: strings(100),
    text: list,
    description: 'browser origins `/mcp` accepts besides loopback ones',
  },
  {
    path: 'server.allowed_hosts',
    env: 'TOOLGATE_ALLOWED_HOSTS',
    schema: strings(100),
    text: list,
    description: 'Host names `/mcp` answers besides loopback names',
  },
  {
    path: 'server.log_level',
    env: 'TOOLGATE_LOG_LEVEL',
    schema: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    description: "the server log's level",
  },
  {
    path: 'server.shutdown_deadline_seconds',
    env: 'TOOLGATE_SHUTDOWN_DEADLINE',
    schema: int(0, 3_600),
    description:
      'on SIGTERM or SIGINT, seconds calls in flight may finish before their connections are cut (default 10)',
  },
  {
    path: 'admin_token.file',
    env: 'TOOLGATE_ADMIN_TOKEN_FILE',
    schema: path,
    description:
      'where the bootstrap admin token is kept (default `admin-token` in the data folder)',
  },
  {
    path: 'admin_token.enabled',
    env: 'TOOLGATE_ADMIN_TOKEN',
    schema: { type: 'boolean' },
    text: (v) => (v ? null : 'disabled'),
    description: '`false` turns the bootstrap admin token off (as `--no-admin-token`)',
  },
  {
    path: 'master_key_file',
    env: 'TOOLGATE_MASTER_KEY_FILE',
    schema: path,
    description: "the secrets master key's file (default `master.key` in the data folder)",
  },
  {
    path: 'limits.max_sessions_per_agent',
    env: 'TOOLGATE_MAX_SESSIONS_PER_AGENT',
    schema: int(1, 1_000_000),
    description: 'open sessions of one agent',
  },
  {
    path: 'limits.user_session_share',
    env: 'TOOLGATE_USER_SESSION_SHARE',
    schema: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    text: String,
    description:
      "share of an agent's sessions, streams and pending approvals one principal may hold",
  },
  {
    path: 'limits.max_pending_approvals_per_agent',
    env: 'TOOLGATE_MAX_PENDING_APPROVALS_PER_AGENT',
    schema: int(1, 1_000_000),
    description: 'pending approvals of one agent',
  },
  {
    path: 'limits.max_mcp_sessions',
    env: 'TOOLGATE_MAX_MCP_SESSIONS',
    schema: int(1, 1_000_000),
    description: 'open MCP sessions of the process',
  },
  {
    path: 'limits.max_in_flight',
    env: 'TOOLGATE_MAX_IN_FLIGHT',
    schema: int(1, 100_000),
    description: 'requests in flight in the process',
  },
  {
    path: 'limits.max_in_flight_per_caller',
    env: 'TOOLGATE_MAX_IN_FLIGHT_PER_CALLER',
    schema: int(1, 100_000),
    description: 'requests in flight of one caller',
  },
  {
    path: 'limits.max_event_loop_delay_ms',
    env: 'TOOLGATE_MAX_EVENT_LOOP_DELAY_MS',
    schema: int(0, 600_000),
    description: 'event-loop delay above which new work is refused (0: off)',
  },
  {
    path: 'limits.approval_wait_seconds',
    env: 'TOOLGATE_APPROVAL_WAIT',
    schema: int(0, 600),
    description:
      'seconds an MCP call that waits for approval is held open for its decision (0: at once)',
  },
  {
    path: 'oidc.issuer',
    env: 'TOOLGATE_OIDC_ISSUER',
    schema: url,
    description: "single sign-on: the provider's issuer",
  },
  {
    path: 'oidc.client_id',
    env: 'TOOLGATE_OIDC_CLIENT_ID',
    schema: str,
    description: 'single sign-on: the client id',
  },
  {
    path: 'oidc.client_secret_file',
    env: 'TOOLGATE_OIDC_CLIENT_SECRET_FILE',
    schema: path,
    description: "single sign-on: the file holding the client's secret",
  },
  {
    path: 'oidc.redirect_uri',
    env: 'TOOLGATE_OIDC_REDIRECT_URI',
    schema: url,
    description: 'single sign-on: the redirect URI (default from `server.public_url`)',
  },
  {
    path: 'oidc.roles_claim',
    env: 'TOOLGATE_OIDC_ROLES_CLAIM',
    schema: str,
    description: 'single sign-on: the claim holding roles',
  },
  {
    path: 'oidc.teams_claim',
    env: 'TOOLGATE_OIDC_TEAMS_CLAIM',
    schema: str,
    description: 'single sign-on: the claim holding teams',
  },
  {
    path: 'oidc.role_map',
    env: 'TOOLGATE_OIDC_ROLE_MAP',
    schema: {
      type: 'object',
      maxProperties: 100,
      additionalProperties: { enum: [...OPERATOR_ROLES] },
    },
    text: (v) => JSON.stringify(v),
    description: 'single sign-on: claim value → role',
  },
  {
    path: 'passkeys.origin',
    env: 'TOOLGATE_PASSKEYS_ORIGIN',
    schema: url,
    description:
      'passkeys: the origin operators open the console at behind TLS (default `server.public_url` when it names a domain; without either, only http://localhost takes passkeys)',
  },
  {
    path: 'passkeys.rp_id',
    env: 'TOOLGATE_PASSKEYS_RP_ID',
    schema: str,
    description:
      "passkeys: the WebAuthn relying party ID, the origin's host or a domain it is under (default the origin's host; never an IP address)",
  },
  {
    path: 'passkeys.require_for_irreversible',
    env: 'TOOLGATE_PASSKEYS_REQUIRE_FOR_IRREVERSIBLE',
    schema: { type: 'boolean' },
    text: String,
    description:
      'passkeys: irreversible and permission-changing decisions (approvals of their calls, four-eyes changes, security review approvals) need a passkey; a TOTP code is refused for them. Recorded in the database for every process on it (CLI commands and replicas started without it hold it too); only an explicit false lifts it. Each change of the recorded rule is audited (`passkeys.requirement_changed`, actor `system:config`, subject `organisation:passkeys`, with the value before)',
  },
  {
    path: 'jwt.issuer',
    env: 'TOOLGATE_JWT_ISSUER',
    schema: str,
    description: 'agent JWTs: the issuer',
  },
  {
    path: 'jwt.audience',
    env: 'TOOLGATE_JWT_AUDIENCE',
    schema: str,
    description: 'agent JWTs: the audience',
  },
  {
    path: 'jwt.jwks_url',
    env: 'TOOLGATE_JWKS_URL',
    schema: url,
    description: 'agent JWTs: the JWKS URL',
  },
  {
    path: 'jwt.jwks_file',
    env: 'TOOLGATE_JWKS_FILE',
    schema: path,
    description: 'agent JWTs: a JWKS file',
  },
  {
    path: 'jwt.agent_claim',
    env: 'TOOLGATE_JWT_AGENT_CLAIM',
    schema: str,
    description: 'agent JWTs: the claim naming the agent',
  },
  {
    path: 'jwt.user_claim',
    env: 'TOOLGATE_JWT_USER_CLAIM',
    schema: str,
    description: 'agent JWTs: the claim naming the user',
  },
  {
    path: 'jwt.permissions_claim',
    env: 'TOOLGATE_JWT_PERMISSIONS_CLAIM',
    schema: str,
    description: "agent JWTs: the claim holding the user's permissions",
  },
  {
    path: 'oauth_config',
    env: 'TOOLGATE_OAUTH_CONFIG',
    schema: path,
    description: "the OAuth resource server's configuration file",
  },
  {
    path: 'detectors',
    env: 'TOOLGATE_DETECTORS',
    schema: path,
    description: "the detectors' configuration file",
  },
  {
    path: 'notify.webhook_urls',
    env: 'TOOLGATE_NOTIFY_WEBHOOK_URL',
    schema: strings(20),
    text: list,
    description: "reviewers' webhooks",
  },
  {
    path: 'outbound.allow_loopback',
    env: 'TOOLGATE_OUTBOUND_ALLOW_LOOPBACK',
    schema: { type: 'boolean' },
    text: (v) => (v ? '1' : '0'),
    description: 'outbound URLs people configure may be loopback',
  },
  {
    path: 'owners.teams',
    env: 'TOOLGATE_TEAMS',
    schema: strings(1000),
    text: list,
    description: 'teams known to own tools (for orphaned tools)',
  },
  {
    path: 'owners.fallback_team',
    env: 'TOOLGATE_OWNER_FALLBACK_TEAM',
    schema: str,
    description: 'whose channels hear of an orphaned tool whose team has none',
  },
  {
    path: 'audit.classified_retention_days',
    env: 'TOOLGATE_CLASSIFIED_RETENTION_DAYS',
    schema: int(1, 36_500),
    description: 'days the raw arguments are kept',
  },
  {
    path: 'sandbox.uids',
    env: 'TOOLGATE_SANDBOX_UIDS',
    schema: { type: 'string', pattern: '^[0-9]+-[0-9]+$' },
    description: 'host uids for runs when toolgate is root (`FIRST-LAST`)',
  },
  {
    path: 'sandbox.driver',
    env: 'TOOLGATE_SANDBOX',
    schema: { enum: ['process', 'namespace', 'gvisor'] },
    description:
      'the sandbox driver this deployment relies on (`doctor` exits 5 when it does not work)',
  },
  {
    path: 'sandbox.cgroup',
    env: 'TOOLGATE_SANDBOX_CGROUP',
    schema: path,
    description: "the cgroup (v2) under which runs' memory cgroups are made",
  },
  {
    path: 'health.enabled',
    env: 'TOOLGATE_HEALTH',
    schema: { type: 'boolean' },
    text: (v) => (v ? 'on' : 'off'),
    description: 'probe tools and keep their health (default on)',
  },
  {
    path: 'health.interval_seconds.public',
    env: 'TOOLGATE_HEALTH_INTERVAL_PUBLIC',
    schema: int(5, 86_400),
    description: 'probe interval of public tools (default 600)',
  },
  {
    path: 'health.interval_seconds.restricted',
    env: 'TOOLGATE_HEALTH_INTERVAL_RESTRICTED',
    schema: int(5, 86_400),
    description: 'probe interval of restricted tools (default 60)',
  },
  {
    path: 'health.interval_seconds.privileged',
    env: 'TOOLGATE_HEALTH_INTERVAL_PRIVILEGED',
    schema: int(5, 86_400),
    description: 'probe interval of privileged tools (default 60)',
  },
  {
    path: 'health.probe_timeout_ms',
    env: 'TOOLGATE_HEALTH_PROBE_TIMEOUT_MS',
    schema: int(100, 600_000),
    description: 'how long one probe may take',
  },
  {
    path: 'health.max_concurrent_probes',
    env: 'TOOLGATE_HEALTH_MAX_CONCURRENT_PROBES',
    schema: int(1, 1_000),
    description: 'probes running at once',
  },
  ...TRACING_SETTINGS,
];

/** The file's JSON Schema, built from the table: nested objects, nothing else allowed. */
export function settingsSchema(): Json {
  const root: Json = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://toolgate.dev/schemas/settings.json',
    title: 'toolgate settings file',
    type: 'object',
    additionalProperties: false,
    properties: {},
  };
  for (const s of SETTINGS) {
    const parts = s.path.split('.');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      const props = node.properties as Json;
      props[part] ??= { type: 'object', additionalProperties: false, properties: {} };
      node = props[part] as Json;
    }
    (node.properties as Json)[parts.at(-1) as string] = {
      ...s.schema,
      description: `${s.description} (${s.env})`,
    };
  }
  return root;
}

const validateSettings = settingsValidator(settingsSchema());

function valueAt(doc: Json, dotted: string): unknown {
  let node: unknown = doc;
  for (const part of dotted.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Json)[part];
  }
  return node;
}

/** Where a URL setting holds credentials (userinfo; a `db` secret, inline or as a parameter). */
function credentialProblems(doc: Json): Problem[] {
  const found: Problem[] = [];
  for (const s of SETTINGS) {
    const isUrl =
      s.path === 'db' || s.schema.pattern === url.pattern || s.path === 'notify.webhook_urls';
    const value = valueAt(doc, s.path);
    if (!isUrl || value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    values.forEach((v, i) => {
      if (typeof v !== 'string' || v.startsWith('sqlite:')) return;
      const message =
        s.path === 'db' ? dbProblem(v) : userinfo(v) ? 'must not hold credentials' : null;
      if (message === null) return;
      const pointer = `/${s.path.replaceAll('.', '/')}${Array.isArray(value) ? `/${i}` : ''}`;
      found.push(problem(pointer, message, 'settings.credentials'));
    });
  }
  return found;
}

/** A database URL's secrets (a password, a key's passphrase: db-url.ts), named, never shown. */
function dbProblem(v: string): string | null {
  const held = dbUrlSecrets(v);
  return held.length === 0
    ? null
    : `must not hold ${held.join(', ')} (put a password in a .pgpass file or PGPASSFILE)`;
}

function userinfo(v: string): boolean {
  try {
    const parsed = new URL(v);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false; // not a URL: the reader of the setting says so
  }
}

const TOP_LEVEL = new Set(SETTINGS.map((s) => s.path.split('.')[0] as string));
const MAX_KEY_ECHO = 32;

/**
 * A mapping none of whose keys is a setting is not a settings file: one problem, no key echoed
 * (its "keys" may be a secret file's lines). Otherwise unknown keys are named, cut short.
 */
function shapeProblems(doc: unknown, problems: Problem[]): Problem[] {
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) {
    const keys = Object.keys(doc);
    if (keys.length > 0 && !keys.some((k) => TOP_LEVEL.has(k)))
      return [
        problem(
          '',
          'is not a settings file: no top-level key is a setting',
          'settings.not_settings',
        ),
      ];
  }
  return problems.map((p) => {
    const parts = p.pointer.split('/');
    if (!parts.some((part) => part.length > MAX_KEY_ECHO)) return p;
    const short = parts.map((part) =>
      part.length > MAX_KEY_ECHO ? `${part.slice(0, MAX_KEY_ECHO)}…` : part,
    );
    return { ...p, pointer: short.join('/') };
  });
}

/** What a file says, as variables; problems (with JSON pointers) when it is not a valid file. */
export function readSettingsFile(file: string): {
  readonly env: Record<string, string>;
  readonly problems: Problem[];
} {
  let doc: unknown;
  try {
    // Messages name the problem and its line, never the file's text (core/parse-file-text.ts).
    doc = parseFileText(
      readBoundedFile(file, { option: '--config', maxBytes: MAX_SECRET_FILE_BYTES }),
      file,
    );
  } catch (err) {
    const message = (err instanceof Error ? err.message.split('\n')[0] : String(err)) ?? '';
    const named = message.startsWith(`${file}: `) ? message : `${file}: ${message}`;
    return { env: {}, problems: [problem('', named, 'settings.read')] };
  }
  const invalid = validateSettings(doc);
  const problems =
    invalid.length > 0 ? shapeProblems(doc, invalid) : credentialProblems(doc as Json);
  if (problems.length > 0) return { env: {}, problems };
  const env: Record<string, string> = {};
  for (const s of SETTINGS) {
    const value = valueAt(doc as Json, s.path);
    if (value === undefined) continue;
    const text = s.text ? s.text(value) : String(value);
    if (text !== null) env[s.env] = text;
  }
  return { env, problems: [] };
}

/**
 * Fills `env` with what the file says for each variable `env` does not set; returns which came
 * from the file and which the environment overrode.
 */
export function fillFromSettings(
  env: NodeJS.ProcessEnv,
  fromFile: Readonly<Record<string, string>>,
): { readonly applied: string[]; readonly overridden: string[] } {
  const applied: string[] = [];
  const overridden: string[] = [];
  for (const [name, value] of Object.entries(fromFile)) {
    if (env[name] !== undefined) overridden.push(name);
    else {
      env[name] = value;
      applied.push(name);
    }
  }
  return { applied, overridden };
}

/** The `--config FILE` (or `--config=FILE`) of an argument list, else TOOLGATE_CONFIG. */
export function configFileOf(argv: readonly string[], env: NodeJS.ProcessEnv): string | null {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') break;
    if (arg === '--config') return argv[i + 1] ?? '';
    if (arg.startsWith('--config=')) return arg.slice('--config='.length);
  }
  const fromEnv = env.TOOLGATE_CONFIG?.trim();
  return fromEnv ? fromEnv : null;
}
