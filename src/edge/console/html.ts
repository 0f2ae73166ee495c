/**
 * @module HTML for the console, escaped by construction: every value interpolated into `html`
 * is text (tool descriptions, arguments and results are attacker-controlled), unless it is
 * itself `Html` built here. There is no way to mark a string as trusted markup. Every such text
 * also shows each character that does not read as itself (controls, bidi and zero-width
 * characters, tags, separators: core/visible-text.ts) as a visible escape (visibleEscapes): no
 * id, name or value on any page shows one raw (attack rounds 15 to 17).
 */
import { visibleEscapes } from '../../core/index.js';

const HTML_BRAND: unique symbol = Symbol('Html');

export interface Html {
  readonly [HTML_BRAND]: true;
  readonly value: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && HTML_BRAND in value;
}

/** What may be interpolated: text, numbers, markup built here, lists of those; nothing else. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (isHtml(value)) return value.value;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(visibleEscapes(String(value)));
}

/** Tagged template: the literal parts are markup, every interpolation is escaped text. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return { [HTML_BRAND]: true, value: out };
}

export function toHtmlString(fragment: Html): string {
  return fragment.value;
}
