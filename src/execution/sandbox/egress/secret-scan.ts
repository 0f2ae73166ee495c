/**
 * @module Outbound secret scanning (C10): request target, headers and body of a plain
 * HTTP request (or an http-runtime call) against SECRET_PATTERNS, and a lease's own credentials
 * against their audience. Text is also looked at percent-decoded, JSON-unescaped and with Basic
 * auth decoded, the cheap disguises; anything better hidden (base64 bodies, encryption, TLS) is
 * out of its reach, which is why the host allow-list and byte budget stand beside it.
 */

import { SECRET_PATTERNS } from '../../../core/index.js';
import { excerpt } from '../../../domain/policy/index.js';
import { type EgressRefusal, refusal } from './egress-decision.js';

/** A secret handed to a tool, and the only hosts it may be sent to. */
export interface LeaseCredential {
  readonly value: string;
  readonly audienceHosts: readonly string[];
}

/** Shorter values would match ordinary text; the credentials store never issues such. */
export const MIN_CREDENTIAL_LENGTH = 8;

const compiled = SECRET_PATTERNS.map((p) => ({ id: p.id, re: new RegExp(p.source) }));

function percentDecode(text: string): string {
  let current = text;
  // Up to three rounds catches double and triple encoding; each round only shrinks the text.
  for (let round = 0; round < 3 && current.includes('%'); round += 1) {
    const next = current.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    if (next === current) break;
    current = next;
  }
  return current;
}

function jsonStrings(text: string): string | undefined {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[' && first !== '"') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x);
      }
    }
  };
  walk(value);
  return out.join('\n');
}

function basicAuth(text: string): string | undefined {
  const m = /\bbasic\s+([A-Za-z0-9+/=_-]{4,})/i.exec(text);
  return m?.[1] === undefined ? undefined : Buffer.from(m[1], 'base64').toString('latin1');
}

/** Every view of the outbound text the scan looks at. */
function views(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of texts) {
    if (t.length === 0) continue;
    out.push(t);
    const decoded = percentDecode(t);
    if (decoded !== t) out.push(decoded, decoded.replaceAll('+', ' '));
    else if (t.includes('+')) out.push(t.replaceAll('+', ' '));
    const json = jsonStrings(t);
    if (json !== undefined) out.push(json);
    const basic = basicAuth(t);
    if (basic !== undefined) out.push(basic);
  }
  return out;
}

/**
 * The first reason not to send these texts to `host`, or undefined. A lease's credential going
 * to one of its audience hosts is expected and is blanked before the patterns run, so a GitHub
 * token sent to GitHub's API is not mistaken for a leak.
 */
export function scanOutbound(
  host: string,
  texts: readonly string[],
  credentials: readonly LeaseCredential[] = [],
): EgressRefusal | undefined {
  let seen = views(texts);
  for (const cred of credentials) {
    if (cred.value.length < MIN_CREDENTIAL_LENGTH) continue;
    const inAudience = cred.audienceHosts.includes(host);
    if (!inAudience && seen.some((v) => v.includes(cred.value))) {
      return refusal(
        'egress.credential_audience',
        `the request carries this tool's credential to ${excerpt(host)}, which is not its audience`,
      );
    }
    if (inAudience) seen = seen.map((v) => v.replaceAll(cred.value, ''));
  }
  for (const { id, re } of compiled) {
    if (seen.some((v) => re.test(v))) {
      return refusal(
        `egress.secret.${id}`,
        `the request carries what looks like a secret (${id}); it was not sent`,
      );
    }
  }
  return undefined;
}
