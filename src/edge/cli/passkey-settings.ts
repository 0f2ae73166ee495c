/**
 * @module The passkeys' settings as `serve` and `config check` read them (docs/configuration.md,
 * docs/architecture.md §6): the relying party behind TLS — `passkeys.rp_id` and `passkeys.origin`,
 * or else `server.public_url` when it names a domain — and whether irreversible and
 * permission-changing decisions need a passkey. Without a relying party only a console opened at
 * http://localhost takes passkeys: browsers refuse an IP address as RP ID.
 */
import { isIP } from 'node:net';
import { problem, ToolgateError } from '../../core/index.js';

export interface PasskeySettings {
  readonly relyingParty: { readonly rpId: string; readonly origin: string } | null;
  /** Undefined when the setting is not given: what the database records stands. */
  readonly required: boolean | undefined;
}

function invalid(pointer: string, message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, {
    problems: [problem(pointer, message, 'passkeys.setting')],
  });
}

/** An http(s) origin exactly as a browser writes it (no path, query or user), or a refusal. */
function originOf(text: string, pointer: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(pointer, `${pointer.slice(1)} is not a URL`);
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.origin !== text.replace(/\/$/, '')
  )
    throw invalid(
      pointer,
      `${pointer.slice(1)} must be an origin such as https://toolgate.example.com`,
    );
  return url;
}

export function passkeysFromEnv(env: NodeJS.ProcessEnv, publicUrl: string): PasskeySettings {
  const flag = env.TOOLGATE_PASSKEYS_REQUIRE_FOR_IRREVERSIBLE;
  if (flag !== undefined && flag !== 'true' && flag !== 'false')
    throw invalid(
      '/passkeys/require_for_irreversible',
      'passkeys.require_for_irreversible is true or false',
    );
  // Unset: the rule a start recorded in the database stands (passkey-decisions.ts).
  const required = flag === undefined ? undefined : flag === 'true';
  const origin = env.TOOLGATE_PASSKEYS_ORIGIN;
  const rpId = env.TOOLGATE_PASSKEYS_RP_ID;
  if (origin !== undefined) {
    const url = originOf(origin, '/passkeys/origin');
    const id = rpId ?? url.hostname;
    // The RP ID is the origin's host or a registrable suffix of it, compared label by label.
    if (id !== url.hostname && !url.hostname.endsWith(`.${id}`))
      throw invalid(
        '/passkeys/rp_id',
        `passkeys.rp_id ${id} is not ${url.hostname} or a domain it is under`,
      );
    if (isIP(id) !== 0)
      throw invalid(
        '/passkeys/rp_id',
        'passkeys.rp_id must be a domain: browsers refuse an IP address',
      );
    return { relyingParty: { rpId: id, origin: url.origin }, required };
  }
  if (rpId !== undefined) throw invalid('/passkeys/origin', 'passkeys.rp_id needs passkeys.origin');
  // server.public_url, when it names a domain other than localhost, is where browsers sign.
  const pub = new URL(publicUrl);
  if (isIP(pub.hostname.replace(/^\[|\]$/g, '')) !== 0 || pub.hostname === 'localhost')
    return { relyingParty: null, required };
  return { relyingParty: { rpId: pub.hostname, origin: pub.origin }, required };
}
