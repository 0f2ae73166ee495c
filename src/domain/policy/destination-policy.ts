/**
 * @module Destinations that are not network hosts (C6, docs/architecture.md §3 step `policy`): a tool's
 * `destinations` rules constrain an argument — an e-mail recipient, a URL's host, an account, a
 * phone number, a chat handle or channel — element by element against an allow-list: static
 * values in the definition, an e-mail domain rule, or live sets (destination-sets.ts). Values are
 * parsed by kind, normalised, then compared exactly; anything that does not parse as its kind is
 * refused, never guessed at. Pure: the live sets are asked through the `SetMembership` port.
 */

import { valuesAt } from './policy-targets.js';
import { excerpt } from './policy-verdict.js';
import { checkUrl, isCanonicalDnsName } from './url-policy.js';

export const DESTINATION_KINDS = ['email', 'url', 'host', 'account', 'phone', 'chat'] as const;
export type DestinationRuleKind = (typeof DESTINATION_KINDS)[number];

/** Where a value may come from to be admitted; any one source admitting it is enough. */
export interface DestinationAllow {
  /** Values written in the definition, normalised as their kind is. */
  readonly values?: readonly string[];
  /**
   * For kind `email` only: `example.com` admits exactly that domain (after lower-casing);
   * `*.example.com` admits its sub-domains (and not `example.com` itself unless it is listed too).
   */
  readonly email_domains?: readonly string[];
  /** Names of live destination sets (admin-managed or supplied by a directory tool). */
  readonly sets?: readonly string[];
}

/** One constrained argument of a tool definition. */
export interface DestinationRule {
  /**
   * JSON pointer into the arguments (`/to`, `/message/recipients`); an array there is checked
   * element by element, and a `*` token stands for every element or member.
   */
  readonly argument: string;
  readonly kind: DestinationRuleKind;
  readonly allow: DestinationAllow;
}

export type Normalised =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly message: string };

const MAX_DESTINATION_CHARS = 512;
/** RFC 5322 dot-atom text: no quoted local parts, comments or display names. */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const ACCOUNT = /^[A-Z0-9]{5,34}$/;
const PHONE = /^\+?[0-9]{4,20}$/;
const CHAT = /^[#@]?[a-z0-9][a-z0-9_.:-]{0,79}$/;

/** Printable ASCII only: anything else (look-alikes, invisible characters, spaces) is refused. */
function printableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/**
 * A DNS name as a destination domain: LDH labels, at least two of them, lower case, no trailing
 * dot, no IDN (`xn--`) label — a look-alike domain is refused rather than compared.
 */
export function destinationDomain(raw: string): Normalised {
  const domain = asciiLower(raw);
  if (!isCanonicalDnsName(domain) || !domain.includes('.')) {
    return { ok: false, message: 'is not a DNS domain name' };
  }
  if (domain.split('.').some((l) => l.startsWith('xn--'))) {
    return { ok: false, message: 'internationalised (xn--) domains are not accepted' };
  }
  return { ok: true, value: domain };
}

/** The one spelling of `raw` as a destination of `kind`, or why it is not one. Never throws. */
export function normaliseDestination(kind: DestinationRuleKind, raw: unknown): Normalised {
  if (typeof raw !== 'string') return { ok: false, message: 'must be a string' };
  if (raw.length === 0 || raw.length > MAX_DESTINATION_CHARS) {
    return { ok: false, message: `must be 1 to ${MAX_DESTINATION_CHARS} characters` };
  }
  switch (kind) {
    case 'email':
      return email(raw);
    case 'url': {
      const verdict = checkUrl(raw, { hosts: 'any' });
      return verdict.ok
        ? { ok: true, value: verdict.value.host }
        : { ok: false, message: verdict.message };
    }
    case 'host':
      return printableAscii(raw) ? destinationDomain(raw) : { ok: false, message: 'must be ASCII' };
    case 'account': {
      const compact = raw.replaceAll(' ', '').toUpperCase();
      return ACCOUNT.test(compact) && printableAscii(compact)
        ? { ok: true, value: compact }
        : { ok: false, message: 'is not an account number or IBAN' };
    }
    case 'phone': {
      const digits = raw.replace(/[ ().-]/g, '');
      return PHONE.test(digits)
        ? { ok: true, value: digits }
        : { ok: false, message: 'is not a phone number' };
    }
    case 'chat': {
      if (!printableAscii(raw)) return { ok: false, message: 'must be printable ASCII' };
      const lower = asciiLower(raw);
      return CHAT.test(lower)
        ? { ok: true, value: lower }
        : { ok: false, message: 'is not a chat handle or channel' };
    }
  }
}

/** `local@domain`, exactly one `@`, ASCII only; lower-cased whole (mail systems compare so). */
function email(raw: string): Normalised {
  if (!printableAscii(raw)) {
    return {
      ok: false,
      message: 'must be a plain ASCII address (no display name, no look-alikes)',
    };
  }
  const at = raw.indexOf('@');
  if (at <= 0 || at !== raw.lastIndexOf('@')) {
    return { ok: false, message: 'must hold exactly one @ with a local part before it' };
  }
  const local = raw.slice(0, at);
  if (local.length > 64 || !LOCAL_PART.test(local)) {
    return { ok: false, message: 'has a local part that is not plain dot-atom text' };
  }
  const domain = destinationDomain(raw.slice(at + 1));
  if (!domain.ok) return { ok: false, message: `has a domain that ${domain.message}` };
  return { ok: true, value: `${asciiLower(local)}@${domain.value}` };
}

/** Whether an e-mail domain pattern (`example.com`, `*.example.com`) admits `domain`. */
export function emailDomainAdmits(pattern: string, domain: string): boolean {
  if (pattern.startsWith('*.')) {
    const parent = pattern.slice(2);
    return domain.length > parent.length + 1 && domain.endsWith(`.${parent}`);
  }
  return domain === pattern;
}

/** The live sets, as the policy step asks them. */
export interface SetMembership {
  /** `missing` when no such set exists (the call is then refused: fail closed). */
  admits(set: string, value: string): Promise<'yes' | 'no' | 'missing'>;
}

/** One value a rule applies to: the concrete pointer it sits at and its raw value. */
export interface DestinationValue {
  readonly pointer: string;
  readonly value: unknown;
}

/** Every value a rule constrains in a call: arrays at the pointer are read element by element. */
export function destinationValues(
  args: Record<string, unknown>,
  rule: DestinationRule,
): DestinationValue[] {
  const out: DestinationValue[] = [];
  for (const found of valuesAt(args, rule.argument)) {
    if (Array.isArray(found.value)) {
      found.value.forEach((value, i) => {
        out.push({ pointer: `${found.pointer}/${i}`, value });
      });
    } else out.push(found);
  }
  return out;
}

export type DestinationVerdict =
  | { readonly ok: true; readonly value: string }
  | {
      readonly ok: false;
      /** `destination.malformed`, `destination.not_allowed` or `destination.set_unavailable`. */
      readonly rule: string;
      readonly message: string;
      readonly pointer: string;
    };

/** What a rule's allow-list is, described without its members (never echoed to a caller). */
function sourcesOf(allow: DestinationAllow): string {
  const parts: string[] = [];
  if (allow.values?.length) parts.push(`${allow.values.length} listed value(s)`);
  if (allow.email_domains?.length) parts.push('the e-mail domain rule');
  for (const set of allow.sets ?? []) parts.push(`set ${JSON.stringify(set)}`);
  return parts.join(', ');
}

/**
 * Checks one value against its rule: parsed and normalised as its kind, then admitted by a
 * static value, the e-mail domain rule or a live set, in that order (the cheapest first). A
 * refusal names the pointer and the rule, quotes at most an excerpt of the value, and never the
 * allow-list. A set that does not exist refuses (fail closed).
 */
export async function checkDestination(
  rule: DestinationRule,
  at: DestinationValue,
  sets: SetMembership | undefined,
): Promise<DestinationVerdict> {
  const normal = normaliseDestination(rule.kind, at.value);
  if (!normal.ok) {
    return {
      ok: false,
      rule: 'destination.malformed',
      pointer: at.pointer,
      message: `${at.pointer}: ${typeof at.value === 'string' ? `${excerpt(at.value)} ` : ''}${normal.message} (${rule.kind} destination)`,
    };
  }
  const value = normal.value;
  const allow = rule.allow;
  if (allow.values?.some((v) => same(rule.kind, v, value))) return { ok: true, value };
  if (rule.kind === 'email' && allow.email_domains?.length) {
    const domain = value.slice(value.indexOf('@') + 1);
    if (allow.email_domains.some((p) => emailDomainAdmits(p, domain))) return { ok: true, value };
  }
  for (const set of allow.sets ?? []) {
    const answer = sets === undefined ? 'missing' : await sets.admits(set, value);
    if (answer === 'yes') return { ok: true, value };
    if (answer === 'missing') {
      return {
        ok: false,
        rule: 'destination.set_unavailable',
        pointer: at.pointer,
        message: `${at.pointer}: destination set ${JSON.stringify(set)} is not available; the call is refused`,
      };
    }
  }
  return {
    ok: false,
    rule: 'destination.not_allowed',
    pointer: at.pointer,
    message: `${at.pointer}: ${excerpt(value)} is not an allowed ${rule.kind} destination (allowed: ${sourcesOf(allow)})`,
  };
}

function same(kind: DestinationRuleKind, listed: string, value: string): boolean {
  const n = normaliseDestination(kind, listed);
  return n.ok && n.value === value;
}
