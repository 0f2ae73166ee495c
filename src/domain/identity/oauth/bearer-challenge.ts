/**
 * @module The `WWW-Authenticate: Bearer` challenge of a refused request (RFC 6750 §3, RFC 9728
 * §5.1): where the protected resource metadata is, and, when known, what went wrong
 * (`invalid_token`, `insufficient_scope`) and the scope the request needs (step-up).
 */

export type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

export interface BearerChallenge {
  readonly resourceMetadata?: string;
  readonly error?: BearerError;
  readonly scope?: readonly string[];
  readonly description?: string;
}

/** A quoted-string (RFC 9110 §5.6.4): backslash and quote escaped, controls dropped. */
function quoted(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the controls are what is removed
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, '');
  return `"${clean.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

export function bearerChallenge(challenge: BearerChallenge): string {
  const params: string[] = [];
  if (challenge.resourceMetadata)
    params.push(`resource_metadata=${quoted(challenge.resourceMetadata)}`);
  if (challenge.error) params.push(`error=${quoted(challenge.error)}`);
  if (challenge.scope && challenge.scope.length > 0)
    params.push(`scope=${quoted(challenge.scope.join(' '))}`);
  if (challenge.description) params.push(`error_description=${quoted(challenge.description)}`);
  return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
}
