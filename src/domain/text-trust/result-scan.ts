/**
 * @module The scan of one tool result before anyone sees it (step `result`, docs/architecture.md §3):
 * every string in it — text content, `structuredContent`, keys included — is checked for
 * instruction-like text, credentials and personal data; each finding is labelled, masked or
 * makes the whole result an error, as the tool's result policy says. Instruction-like text is
 * looked for in every result, trusted sources included: a trusted source's record can still hold
 * words someone else wrote (a pasted email, a compromised row), and such a result then counts as
 * untrusted text for the run (`carriesUntrustedText`). The model-text scanner's pre-filter keeps
 * this affordable: plain data (numbers, ids, dates, addresses) is never run through the rules.
 * Binary payloads of MCP content (an image's or a blob's base64) are not text a model reads and
 * are not scanned.
 * Never throws; a result nested deeper than the walk follows is withheld, not half-scanned.
 */

import type { Finding, FindingKind } from '../../core/finding.js';
import { findPersonalData } from '../../core/personal-data.js';
import type { ToolDefinition } from '../catalog/index.js';
import { findInjection } from './injection-findings.js';
import { type EffectiveResultPolicy, resultPolicyOf } from './result-policy.js';
import { findSecrets } from './secret-findings.js';
import { type LabelledFinding, MAX_LABELLED_FINDINGS, type TrustLabel } from './trust-label.js';

export interface ResultScan {
  /** The result as the caller receives it: masked where the policy says redact. */
  readonly output: unknown;
  readonly label: TrustLabel;
  /** The finding that withholds the whole result, when one's action is block. */
  readonly blocked: LabelledFinding | null;
}

/** Deepest nesting scanned; a result deeper than this is withheld (rule `depth`, refused as `result.depth`). */
export const MAX_SCAN_DEPTH = 64;
/** Shorter strings cannot hold an instruction worth the scanner's time ("ok", ids, numbers). */
const MIN_INJECTION_CHARS = 12;

class Walk {
  readonly findings: LabelledFinding[] = [];
  blocked: LabelledFinding | null = null;
  injection = false;
  truncated = false;

  constructor(
    readonly policy: EffectiveResultPolicy,
    readonly mcp: boolean,
  ) {}

  actionOf(kind: FindingKind): LabelledFinding['action'] {
    if (kind === 'injection') return this.policy.injection;
    if (kind === 'secret') return this.policy.secrets;
    return this.policy.personal_data;
  }

  note(f: LabelledFinding): void {
    if (f.kind === 'injection') this.injection = true;
    if (f.action === 'block' && this.blocked === null) this.blocked = f;
    if (this.findings.length < MAX_LABELLED_FINDINGS) this.findings.push(f);
    else this.truncated = true;
  }

  text(value: string, pointer: string): string {
    const found: Finding[] = [...findSecrets(value), ...findPersonalData(value)];
    if (value.length >= MIN_INJECTION_CHARS) {
      found.push(...findInjection(value));
    }
    if (found.length === 0) return value;
    const masks: Finding[] = [];
    let withheld: Finding | null = null;
    const seen = new Set<string>();
    for (const f of found) {
      const action = this.actionOf(f.kind);
      // One label per rule and string: a page of a hundred addresses is one finding.
      if (!seen.has(f.rule)) {
        seen.add(f.rule);
        this.note({ kind: f.kind, rule: f.rule, pointer, action });
      }
      if (action === 'redact') {
        if (f.kind === 'injection') withheld ??= f;
        else masks.push(f);
      }
    }
    if (withheld) return `[withheld by toolgate: instruction-like text (${withheld.rule})]`;
    return masks.length > 0 ? mask(value, masks) : value;
  }

  /**
   * An array's items, and its string items read together: an instruction split across strings
   * (["Ignore previous", "instructions and …"]) is one text to a model that reads them in order.
   * Only the injection rules read the joined text (phrases, so a list of short words is not one).
   */
  array(v: readonly unknown[], pointer: string, depth: number): unknown[] {
    const before = this.injection;
    const out = v.map((item, i) => this.value(item, `${pointer}/${i}`, depth + 1));
    const strings = v.filter((item): item is string => typeof item === 'string');
    if (this.blocked || strings.length < 2 || (this.injection && !before)) return out;
    const joined = strings.join(' ').slice(0, MAX_JOINED_CHARS);
    if (joined.length < MIN_INJECTION_CHARS) return out;
    const found = findInjection(joined)[0];
    if (found === undefined) return out;
    const action = this.actionOf('injection');
    this.note({ kind: 'injection', rule: found.rule, pointer, action });
    if (action !== 'redact') return out;
    const withheld = `[withheld by toolgate: instruction-like text (${found.rule})]`;
    return out.map((item) => (typeof item === 'string' ? withheld : item));
  }

  value(v: unknown, pointer: string, depth: number): unknown {
    if (this.blocked) return v;
    if (typeof v === 'string') return this.text(v, pointer);
    if (typeof v !== 'object' || v === null) return v;
    if (depth >= MAX_SCAN_DEPTH) {
      this.note({ kind: 'injection', rule: 'depth', pointer, action: 'block' });
      return v;
    }
    if (Array.isArray(v)) return this.array(v, pointer, depth);
    const record = v as Record<string, unknown>;
    const binary = this.mcp && typeof record.mimeType === 'string';
    const out: Record<string, unknown> = {};
    let k = 0;
    for (const [key, item] of Object.entries(record)) {
      const at = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      const name = this.text(key, at);
      // A masked key keeps its member distinct from the others.
      const outKey = name === key ? key : `${name}#${k++}`;
      const skip = binary && (key === 'data' || key === 'blob') && typeof item === 'string';
      Object.defineProperty(out, outKey, {
        value: skip ? item : this.value(item, at, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
}

/** Most characters of an array's joined strings read for a split instruction. */
const MAX_JOINED_CHARS = 65_536;

/** `text` with each span replaced by `[redacted:<rule>]`; overlapping spans are merged. */
function mask(text: string, spans: readonly Finding[]): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const s of sorted) {
    if (s.end <= at) continue;
    const start = Math.max(s.start, at);
    out += `${text.slice(at, start)}[redacted:${s.rule}]`;
    at = s.end;
  }
  return out + text.slice(at);
}

/** Scans `output` (an upstream MCP result when the tool's runtime is mcp) by the tool's policy. */
export function scanResult(def: ToolDefinition, output: unknown): ResultScan {
  const policy = resultPolicyOf(def);
  const walk = new Walk(policy, def.runtime.kind === 'mcp');
  const scanned = walk.value(output, '', 0);
  const label: TrustLabel = {
    source: policy.source,
    provenance: def.provenance,
    data_access: def.data_access,
    injection: walk.injection,
    findings: walk.findings,
    ...(walk.truncated ? { truncated: true as const } : {}),
  };
  return { output: walk.blocked ? output : scanned, label, blocked: walk.blocked };
}
