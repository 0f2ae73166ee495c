/**
 * @module Personal data in text a tool returned: e-mail addresses, phone numbers, payment card
 * numbers and IBANs. A shape alone is not enough where a checksum exists — a card number must pass
 * the Luhn check and an IBAN the ISO 13616 mod-97 check — so order numbers, dates and version
 * strings are not taken for them. Every pattern is linear (bounded repetitions, no nested
 * alternation that could backtrack), and each match is checked by code, not by a longer regex.
 */
import type { Finding } from './finding.js';

const EMAIL = /[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b/g;
/** International form, `+` and 7 to 15 digits with single separators (E.164). */
const PHONE_INTERNATIONAL = /\+[1-9](?:[ .-]?\d){6,14}\b/g;
/** North American form with separators: (555) 123-4567, 555-123-4567, 555.123.4567. */
const PHONE_NANP = /(?:\(\d{3}\) ?|\b\d{3}[.-])\d{3}[.-]\d{4}\b/g;
/** 13 to 19 digits: unbroken, in fours (the last group shorter), or Amex's 4-6-5. */
const CARD = /\b(?:\d{13,19}|\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?|\d{4}[ -]\d{6}[ -]\d{5})\b/g;
/** Country, check digits, then 11 to 30 letters or digits, optionally grouped by fours. */
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Card numbers start with a known network's digit: 2 and 5 (Mastercard), 3 (Amex…), 4, 6. */
function cardNumber(match: string): boolean {
  const digits = match.replace(/[ -]/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  if (!'23456'.includes(digits[0] ?? '')) return false;
  // All one digit (test patterns, padding) is not a card.
  if (/^(\d)\1+$/.test(digits)) return false;
  return luhn(digits);
}

/** Whether an IBAN-shaped string (spaces allowed) has a valid mod-97 check. */
export function ibanChecks(match: string): boolean {
  const compact = match.replace(/ /g, '');
  if (compact.length < 15 || compact.length > 34) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const digit of value) rest = (rest * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

function matches(
  text: string,
  re: RegExp,
  rule: string,
  accept: (m: string, start: number) => boolean,
  out: Finding[],
): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (accept(m[0], m.index)) {
      out.push({ kind: 'personal_data', rule, start: m.index, end: m.index + m[0].length });
    }
  }
}

const always = () => true;

/** Personal data in `text`, in rule order then position; spans of different rules may overlap. */
export function findPersonalData(text: string): Finding[] {
  const out: Finding[] = [];
  matches(text, EMAIL, 'pii.email', always, out);
  // The digits of an IBAN-shaped value (valid or not) are its own, never a card number.
  const ibanShaped: [number, number][] = [];
  matches(
    text,
    IBAN,
    'pii.iban',
    (m, start) => {
      ibanShaped.push([start, start + m.length]);
      return ibanChecks(m);
    },
    out,
  );
  const insideIban = (start: number) => ibanShaped.some(([a, b]) => start >= a && start < b);
  matches(text, CARD, 'pii.card', (m, start) => !insideIban(start) && cardNumber(m), out);
  matches(text, PHONE_INTERNATIONAL, 'pii.phone', always, out);
  matches(text, PHONE_NANP, 'pii.phone', always, out);
  return out;
}
