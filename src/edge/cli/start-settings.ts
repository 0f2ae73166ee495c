/**
 * @module What `serve` reads from its settings before it opens anything — each part's variables
 * and the files they name — and `toolgate config check`'s use of the same readers: there a part
 * that fails is a problem at its place in the settings file and, once every part reads, the
 * configuration goes through the check the gateway makes when it opens
 * (api/start-configuration.ts), without a database. One reader per setting, for both.
 */
import {
  checkAdminTokenStrength,
  checkStartConfiguration,
  healthConfigFromEnv,
  notifyConfigFromEnv,
  oidcConfigFromEnv,
  readAdminToken,
  refusalProblems,
  type StartConfiguration,
  settingProblems,
  tracingConfigFromEnv,
} from '../../api/index.js';
import {
  isToolgateError,
  MAX_SECRET_FILE_BYTES,
  type Problem,
  parseFileText,
  problem,
  readBoundedFile,
  ToolgateError,
} from '../../core/index.js';
import { adminTokenDisabled, classifiedRetentionFromEnv } from './command-kit.js';
import { passkeysFromEnv } from './passkey-settings.js';
import {
  existingMasterKey,
  jwtConfigFromEnv,
  logLevelFromEnv,
  oauthConfigFromEnv,
  outboundFromEnv,
  sandboxUidsFromEnv,
} from './runtime-files.js';

/** What a start knows besides the variables: from its flags, or their defaults. */
export interface StartContext {
  /** Where operators reach the gateway (the single sign-on redirect, notification links). */
  readonly publicUrl: string;
  /** Where the bootstrap admin token is kept, and whether it is off (`--no-admin-token`). */
  readonly adminTokenFile: string;
  readonly adminTokenOff: boolean;
  /** The data folder (where `master.key` is kept unless a variable names another). */
  readonly dataDir: string;
}

/** The bootstrap admin token: given in TOOLGATE_ADMIN_TOKEN, or kept in its file (null: to make). */
export interface BootstrapToken {
  readonly token: string | null;
  readonly fromEnv: boolean;
}

type Reader = (env: NodeJS.ProcessEnv, ctx: StartContext) => unknown;

/** Each part: its place in the settings file, and its reader (which throws what a start refuses). */
const PARTS = {
  oidc: ['/oidc', (env, ctx) => oidcConfigFromEnv(env, ctx.publicUrl)],
  notify: ['/notify', (env, ctx) => notifyConfigFromEnv(env, ctx.publicUrl)],
  jwt: ['/jwt', (env) => jwtConfigFromEnv(env)],
  oauth: ['/oauth_config', (env) => oauthConfigFromEnv(env)],
  detectors: ['/detectors', (env) => detectorsFromEnv(env)],
  health: ['/health', (env) => healthConfigFromEnv(env)],
  tracing: ['/tracing', (env) => tracingConfigFromEnv(env)],
  outbound: ['/outbound', (env) => outboundFromEnv(env)],
  masterKey: ['/master_key_file', (env, ctx) => existingMasterKey(env, ctx.dataDir)],
  logLevel: ['/server/log_level', (env) => logLevelFromEnv(env)],
  audit: ['/audit/classified_retention_days', (env) => classifiedRetentionFromEnv(env)],
  sandboxUids: ['/sandbox/uids', (env) => sandboxUidsFromEnv(env)],
  adminToken: ['/admin_token', (env, ctx) => bootstrapToken(env, ctx)],
  passkeys: ['/passkeys', (env, ctx) => passkeysFromEnv(env, ctx.publicUrl)],
} as const satisfies Record<string, readonly [string, Reader]>;

export type StartSettings = {
  readonly [K in keyof typeof PARTS]: ReturnType<(typeof PARTS)[K][1]>;
};

/** Every part, in the table's order; the first refusal is thrown (a start). */
export function readStartSettings(env: NodeJS.ProcessEnv, ctx: StartContext): StartSettings {
  return Object.fromEntries(
    Object.entries(PARTS).map(([key, [, read]]) => [key, read(env, ctx)]),
  ) as StartSettings;
}

/** What the gateway's own check (and `openToolgate`) takes of the settings read. */
export function startConfiguration(s: StartSettings): StartConfiguration {
  return {
    ...(s.jwt ? { jwt: s.jwt } : {}),
    ...(s.oauth ? { oauth: s.oauth } : {}),
    ...(s.detectors !== undefined ? { detectors: s.detectors } : {}),
    notify: s.notify,
    health: s.health,
    outbound: s.outbound,
    passkeys: s.passkeys,
  };
}

/**
 * Every problem a start would refuse `env` with before it listens: each part's, at its place in
 * the settings file; then, once every part reads, the gateway's own check (each wing's settings,
 * the JWKS files, every outbound URL resolved under the outbound rules, single sign-on's issuer).
 */
export async function startProblems(env: NodeJS.ProcessEnv, ctx: StartContext): Promise<Problem[]> {
  const found = Object.values(PARTS).flatMap(([pointer, read]) =>
    settingProblems(pointer, () => read(env, ctx)),
  );
  if (found.length > 0) return found;
  const settings = readStartSettings(env, ctx);
  try {
    await checkStartConfiguration({
      ...startConfiguration(settings),
      ...(settings.oidc ? { oidcIssuer: settings.oidc.issuer } : {}),
    });
    return [];
  } catch (err) {
    return inSettingsFile(err);
  }
}

/** The gateway's configuration keys (`ToolgateOptions`, JSON pointers) and the settings file's. */
const FILE_KEYS: readonly (readonly [option: string, file: string, exact: boolean])[] = [
  ['/notify/webhookUrls', '/notify/webhook_urls', false],
  ['/jwt/jwksUrl', '/jwt/jwks_url', false],
  ['/oidc/issuer', '/oidc/issuer', false],
  // A URL inside a file a setting names: the setting, the place in its file in the message.
  ['/detectors', '/detectors', true],
  ['/oauth', '/oauth_config', true],
];

/** The gateway's refusal as problems at the settings file's keys (the whole file: ''). */
function inSettingsFile(err: unknown): Problem[] {
  const inner = isToolgateError(err)
    ? ((err.details as { problems?: Problem[] }).problems ?? [])
    : [];
  const placed = inner.map((p) => {
    const key = FILE_KEYS.find(([o]) => p.pointer === o || p.pointer.startsWith(`${o}/`));
    if (!key) return null;
    const [option, file, exact] = key;
    const rest = exact ? '' : p.pointer.slice(option.length);
    const named = p.message.startsWith(p.pointer.slice(1))
      ? `${(file + rest).slice(1)}${p.message.slice(p.pointer.length - 1)}`
      : p.message;
    return problem(file + rest, named, p.rule);
  });
  return placed.every((p) => p !== null) && placed.length > 0 ? placed : refusalProblems('', err);
}

/**
 * The detectors' configuration from the file TOOLGATE_DETECTORS names (YAML or JSON), validated
 * when the gateway opens. Its problems name a line, never its text: it may hold an alert webhook's
 * URL, a bearer secret.
 */
function detectorsFromEnv(env: NodeJS.ProcessEnv): StartConfiguration['detectors'] | undefined {
  const file = env.TOOLGATE_DETECTORS;
  if (!file) return undefined;
  const text = readBoundedFile(file, {
    option: 'TOOLGATE_DETECTORS',
    maxBytes: MAX_SECRET_FILE_BYTES,
  });
  return parseFileText(text, `TOOLGATE_DETECTORS ${file}`) as StartConfiguration['detectors'];
}

/** The bootstrap admin token as a start takes it; null when it is off. Never makes the file. */
function bootstrapToken(env: NodeJS.ProcessEnv, ctx: StartContext): BootstrapToken | null {
  if (ctx.adminTokenOff || adminTokenDisabled(env)) return null;
  try {
    const given = env.TOOLGATE_ADMIN_TOKEN;
    if (given !== undefined) {
      checkAdminTokenStrength(given);
      return { token: given, fromEnv: true };
    }
    return { token: readAdminToken(ctx.adminTokenFile, '--admin-token-file'), fromEnv: false };
  } catch (err) {
    throw new ToolgateError('INPUT_INVALID', err instanceof Error ? err.message : String(err), {
      problems: [],
    });
  }
}
