/**
 * @module The poisoning scan of a tool definition's texts (C3): its name, description and every
 * schema string a model reads, through description-scan.ts's rules. Catalogs repeat the same
 * schema keys and values ("type", "string", "limit"), descriptions and hosts across thousands of
 * tools, so each distinct text is scanned once and its verdict reused for every definition it
 * stands in (docs/architecture.md §8, C3, "Bulk registration").
 */
import {
  type LinkContext,
  linkContext,
  type ScanFinding,
  type ScanInput,
  scanField,
} from './description-scan.js';
import { ownKeysOf } from './scan-own-name.js';

export type { ScanFinding } from './description-scan.js';

import type { ModelTextKind } from './schema-model-texts.js';

/**
 * Verdicts kept across definitions. A verdict is a pure function of the text, its kind, the
 * tool's declared hosts and — only through a capture compared with the speaker's own name — that
 * name; so it is kept only when no capture was the speaker's own, with the name keys compared,
 * and reused only for a speaker whose own keys are none of them. Anything else is scanned again:
 * the memo never changes a verdict (test/catalog/scan-memo.test.ts). Bounded, least recently
 * used out first.
 */
const MEMO_MAX_ENTRIES = 10_000;
/** Longer texts are scanned each time (they are rarely repeated, and would hold memory). */
const MEMO_MAX_TEXT = 1_000;
const memo = new Map<
  string,
  { readonly findings: ScanFinding[]; readonly checked: readonly string[] }
>();

function linksKeyOf(links: LinkContext): string {
  return `${[...links.ownHosts].sort().join(' ')}\u0001${[...links.docHosts].sort().join(' ')}`;
}

/** One text's findings with field '' (the caller names the field), through the memo. */
function scanSharedText(
  raw: string,
  own: string,
  ownKeys: ReadonlySet<string>,
  kind: ModelTextKind | 'name',
  links: LinkContext,
  linksKey: string,
): readonly ScanFinding[] {
  if (raw.length > MEMO_MAX_TEXT) return scanField('', raw, own, kind, links).findings;
  // Length-prefixed: no text or host can make two different pairs one key.
  const key = `${kind}:${linksKey.length}:${linksKey}${raw}`;
  const hit = memo.get(key);
  if (hit && !hit.checked.some((k) => ownKeys.has(k))) {
    // Most recently used last: the oldest is the least recently used.
    memo.delete(key);
    memo.set(key, hit);
    return hit.findings;
  }
  const scan = scanField('', raw, own, kind, links);
  if (!scan.own.matched && !hit) {
    if (memo.size >= MEMO_MAX_ENTRIES) {
      const oldest = memo.keys().next();
      if (!oldest.done) memo.delete(oldest.value);
    }
    memo.set(key, { findings: scan.findings, checked: scan.own.checked });
  }
  return scan.findings;
}

/**
 * Flags poisoning in a tool's name, description and schema texts. Findings come in field order
 * (name, description, then `extraTexts` as given), then rule order, then position. The verdict
 * depends on the tool's own texts and hosts only, never on the rest of the catalog.
 */
export function scanToolText(input: ScanInput): ScanFinding[] {
  const links = linkContext(input.ownHosts, input.docHosts);
  const linksKey = linksKeyOf(links);
  const own = input.name;
  const ownKeys = ownKeysOf(own);
  const findings: ScanFinding[] = [];
  const add = (field: string, text: string, kind: ModelTextKind | 'name'): void => {
    for (const f of scanSharedText(text, own, ownKeys, kind, links, linksKey)) {
      findings.push({ ...f, field });
    }
  };
  add('/name', own, 'name');
  add('/description', input.description, 'text');
  // Schemas repeat the same keys and values ("type", "string"): each distinct one is scanned once.
  for (const extra of input.extraTexts ?? []) add(extra.field, extra.text, extra.kind ?? 'text');
  return findings;
}
