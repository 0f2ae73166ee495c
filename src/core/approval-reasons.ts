/**
 * @module Why a call waits for a reviewer, as the gate recorded it (docs/architecture.md §3, step
 * `approval`): one structured list on the approval, and the one way every view (the console's
 * approval page, `toolgate approvals show`, the REST view's display fields) turns it into words.
 * A view never infers a reason from the tool's action class: it renders this list, so an
 * escalated call never reads as "the action class always asks".
 */
import type {
  ApprovalReason,
  CallCost,
  FlaggedText,
  RenderedCall,
  UntrustedDestination,
} from './rendered-call.js';
import { visibleEscapes, visibleJsonEscapes } from './visible-text.js';

/**
 * The reasons of an approval recorded before the gate kept the list: rebuilt from the fields it
 * did keep (conditions, untrusted destinations, after-injection sources). With none of those the
 * tool's approval rule asked, which for such a row was its action class or its definition; the
 * line says so rather than guess which.
 */
export function reasonsOf(r: RenderedCall): readonly ApprovalReason[] {
  if (r.reasons !== undefined) return r.reasons;
  const out: ApprovalReason[] = [];
  if (r.after_injection) {
    out.push({
      kind: 'after_injection',
      rule: 'provenance.injection_seen',
      untrusted_sources: r.after_injection.untrusted_sources,
      flagged: [],
    });
  }
  if (r.untrusted_destinations && r.untrusted_destinations.length > 0) {
    out.push({
      kind: 'untrusted_destination',
      rule: 'provenance.untrusted_destination',
      destinations: r.untrusted_destinations,
    });
  }
  for (const c of r.conditions) {
    const v = c as { argument?: unknown; op?: unknown; value?: unknown } | null;
    if (v && typeof v.argument === 'string' && typeof v.op === 'string') {
      out.push({
        kind: 'condition',
        rule: 'approval.condition',
        argument: v.argument,
        op: v.op,
        value: v.value,
      });
    }
  }
  if (out.length === 0)
    out.push({ kind: 'definition', rule: 'approval.definition', mode: 'always' });
  return out;
}

const OPS: Readonly<Record<string, string>> = {
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  eq: '=',
  ne: '≠',
};

/** A destination's first sighting, in words. */
export function destinationLine(d: UntrustedDestination): string {
  return `this ${d.kind} (${d.argument || '/'}) first appeared in the result of ${d.tool_id} (call ${d.call_id}) at ${d.first_seen_at}`;
}

/** A flagged text's origin, in words (the excerpt is shown apart, as untrusted text). */
export function flaggedLine(f: FlaggedText): string {
  const rules = f.rules.length > 0 ? ` (${f.rules.join(', ')})` : '';
  return `instruction-like text${rules} in the result of ${f.tool_id} (call ${f.call_id}) at ${f.at}`;
}

/** The headline of one reason: what a reviewer reads first. */
export function reasonHeadline(r: ApprovalReason): string {
  switch (r.kind) {
    case 'action_class':
      return `the tool's action class (${r.action_class}) always asks`;
    case 'definition':
      return r.mode === 'conditional'
        ? "the tool's definition asks for every call (conditional with no conditions)"
        : "the tool's definition asks for approval of every call";
    case 'condition':
      return `condition ${r.argument} ${OPS[r.op] ?? r.op} ${JSON.stringify(r.value) ?? String(r.value)} holds (or cannot be evaluated)`;
    case 'after_injection':
      return `instruction-like text entered this run through an untrusted result (sources: ${r.untrusted_sources.join(', ') || 'unknown'})`;
    case 'untrusted_destination':
      return `${r.destinations.length === 1 ? 'a value' : `${r.destinations.length} values`} of this call first appeared in untrusted content`;
  }
}

/**
 * Every reason as lines of plain text: a headline, then its particulars indented (each
 * destination's first sighting; each flagged text's origin and excerpt). Not yet escaped for a
 * medium: the console's `html`, the CLI's output and `displayOf` each make invisible characters
 * visible.
 */
export function reasonLines(reasons: readonly ApprovalReason[]): string[] {
  const lines: string[] = [];
  for (const r of reasons) {
    lines.push(`${reasonHeadline(r)} [${r.rule}]`);
    if (r.kind === 'untrusted_destination') {
      for (const d of r.destinations) lines.push(`  ${destinationLine(d)}`);
    }
    if (r.kind === 'after_injection') {
      for (const f of r.flagged) {
        lines.push(`  ${flaggedLine(f)}`);
        if (f.excerpt !== null) lines.push(`    flagged text (untrusted): ${f.excerpt}`);
      }
    }
  }
  return lines;
}

/** The cost and budget left, in words; null when the call costs nothing and no budget applies. */
export function costLine(cost: CallCost | undefined): string | null {
  if (cost === undefined) return null;
  const parts: string[] = [];
  if (cost.cents > 0 || cost.spend_budget_cents !== null) parts.push(`costs ${cents(cost.cents)}`);
  if (cost.spend_budget_cents !== null) {
    parts.push(
      `spend budget ${cents(cost.spend_budget_cents)}, ${cents(Math.max(0, cost.spend_left_cents ?? 0))} left`,
    );
  }
  if (cost.external_sends_budget !== null) {
    parts.push(
      `external sends ${Math.max(0, cost.external_sends_left ?? 0)} of ${cost.external_sends_budget} left`,
    );
  }
  return parts.length > 0 ? parts.join('; ') : null;
}

function cents(n: number): string {
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(n));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * The arguments as a reviewer reads them: indented JSON, every hidden character a visible escape
 * JSON itself reads, so the text still parses to the arguments (visibleJsonEscapes).
 */
export function argumentsText(args: unknown): string {
  return visibleJsonEscapes(JSON.stringify(args, null, 2) ?? 'null');
}

/**
 * What a REST client shows a person: the same reasons and arguments as text with every
 * invisible or reordering character made visible. The raw values stay beside it as data.
 */
export interface ApprovalDisplay {
  readonly reasons: readonly string[];
  readonly arguments: string;
  readonly cost: string | null;
  readonly preview: string | null;
}

export function displayOf(r: RenderedCall): ApprovalDisplay {
  return {
    reasons: reasonLines(reasonsOf(r)).map(visibleEscapes),
    arguments: argumentsText(r.arguments),
    cost: costLine(r.cost),
    preview: r.preview?.text != null ? visibleEscapes(r.preview.text) : null,
  };
}
