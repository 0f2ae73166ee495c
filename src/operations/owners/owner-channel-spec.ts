/**
 * @module A channel as configuration (`kind: OwnerChannel`, docs/configuration.md): a name unique
 * in its team, the team, and where its URL comes from. The URL is a credential, so a document need
 * not hold it: `url_env` names an environment variable of the process that applies the file (the
 * CLI's own), read at apply time and never written back anywhere; `url` carries it inline for a
 * caller that has nowhere else to put it (a REST client). Either way it is stored sealed and shown
 * as its origin only.
 */
import { OWNER_PATTERN, type Problem, problem } from '../../core/index.js';

export const OWNER_CHANNEL_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$';
/** An environment variable's name, as POSIX shells spell them. */
export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
export const MAX_CHANNEL_URL_CHARS = 2_000;

export interface OwnerChannelDocument {
  readonly name: string;
  readonly team: string;
  readonly kind?: 'webhook';
  /** The environment variable of the applying process that holds the URL. */
  readonly url_env?: string;
  /** The URL itself (prefer `url_env`: a file in a repository should hold no credential). */
  readonly url?: string;
}

export const ownerChannelDocumentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'team'],
  oneOf: [{ required: ['url_env'] }, { required: ['url'] }],
  description:
    "An owner team's webhook channel. Its URL is a credential: name the environment variable that holds it (`url_env`, read by `toolgate apply` from its own environment) rather than writing it (`url`).",
  properties: {
    name: { type: 'string', pattern: OWNER_CHANNEL_NAME_PATTERN },
    team: { type: 'string', pattern: OWNER_PATTERN },
    kind: { const: 'webhook' },
    url_env: { type: 'string', pattern: ENV_NAME_PATTERN },
    url: { type: 'string', minLength: 1, maxLength: MAX_CHANNEL_URL_CHARS, writeOnly: true },
  },
} as const;

/** What the schema cannot say as a problem of its own: exactly one source of the URL. */
export function ownerChannelDocumentProblems(doc: OwnerChannelDocument): Problem[] {
  if ((doc.url === undefined) === (doc.url_env === undefined)) {
    return [problem('/url_env', 'give the URL by exactly one of url_env and url', 'channel.url')];
  }
  return [];
}
