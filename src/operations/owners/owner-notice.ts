/**
 * @module What an owner team is told about one of its tools (docs/architecture.md §8, C16): a
 * typed notice per kind, and its Slack-compatible message (`text`, one mrkdwn section, and the
 * same facts as data under `toolgate`). Built from ids, versions, times, counts and rule names:
 * never a description, a finding's excerpt or anything else a tool author wrote.
 */

/** The kinds of notice; `unhealthy` comes from the health monitor through `OwnerNotices.toolEvent`. */
export const OWNER_NOTICE_KINDS = [
  'deprecated',
  'retiring',
  'quarantined',
  'orphaned',
  'unhealthy',
  'error_rate',
] as const;
export type OwnerNoticeKind = (typeof OWNER_NOTICE_KINDS)[number];

export type FactValue = string | number | boolean | null;
/** A notice's facts: flat, small, our own values (bounded before they are sent). */
export type NoticeFacts = Readonly<Record<string, FactValue | readonly FactValue[]>>;

/** One event about one tool version; `owner` is looked up from the catalog when absent. */
export interface ToolEvent {
  readonly kind: OwnerNoticeKind;
  readonly tool_id: string;
  readonly version: string;
  readonly owner?: string;
  readonly facts?: NoticeFacts;
}

export interface OwnerNoticePayload {
  readonly text: string;
  readonly blocks: readonly [
    { readonly type: 'section'; readonly text: { readonly type: 'mrkdwn'; readonly text: string } },
  ];
  readonly toolgate: {
    readonly type: `owner.${OwnerNoticeKind}`;
    readonly link: string;
    readonly team: string;
    readonly tool_id: string;
    readonly tool_version: string;
    readonly facts: NoticeFacts;
  };
}

/** Slack's three control characters escaped, backticks (our code spans) replaced, bounded. */
function esc(value: string): string {
  return value
    .slice(0, 200)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/`/g, "'");
}

const code = (value: string) => `\`${esc(value)}\``;

function str(facts: NoticeFacts, key: string): string | null {
  const v = facts[key];
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}

function headline(e: ToolEvent, facts: NoticeFacts): string {
  const tool = `${e.tool_id}@${e.version}`;
  switch (e.kind) {
    case 'deprecated':
      return `Tool deprecated: ${tool}${str(facts, 'retire_at') ? `, retires at ${str(facts, 'retire_at')}` : ''}`;
    case 'retiring':
      return `Tool retires soon: ${tool} at ${str(facts, 'retire_at') ?? 'its retire date'}`;
    case 'quarantined':
      return `Tool quarantined: ${tool} (${str(facts, 'findings') ?? '0'} findings)`;
    case 'orphaned':
      return `Tool orphaned: ${tool}, its owner is ${str(facts, 'reason') ?? 'unknown'}`;
    case 'unhealthy':
      return `Tool unhealthy: ${tool}${str(facts, 'state') ? ` (${str(facts, 'state')})` : ''}`;
    case 'error_rate':
      return `Error rate above ${str(facts, 'threshold_percent') ?? '10'}%: ${tool}, ${str(facts, 'errors') ?? '?'} errors of ${str(facts, 'calls') ?? '?'} calls in ${str(facts, 'window_minutes') ?? '5'} minutes`;
  }
}

function factLine(facts: NoticeFacts): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(facts).slice(0, 12)) {
    const text = Array.isArray(v) ? v.map((x) => String(x)).join(', ') : String(v);
    parts.push(`*${esc(k)}* ${code(text)}`);
  }
  return parts.join(' · ');
}

/** Facts bounded: at most 16 keys, strings cut at 200 characters, lists at 20 items. */
export function boundFacts(facts: NoticeFacts | undefined): NoticeFacts {
  const out: Record<string, FactValue | FactValue[]> = {};
  const one = (v: unknown): FactValue =>
    typeof v === 'string'
      ? v.slice(0, 200)
      : typeof v === 'number' || typeof v === 'boolean'
        ? v
        : null;
  for (const [k, v] of Object.entries(facts ?? {}).slice(0, 16))
    out[k.slice(0, 64)] = Array.isArray(v) ? v.slice(0, 20).map(one) : one(v);
  return out;
}

export function ownerNoticeMessage(
  e: ToolEvent,
  team: string,
  facts: NoticeFacts,
  publicUrl: string,
): OwnerNoticePayload {
  // The console's catalog page of the tool; a quarantined one, its quarantine page.
  const page = e.kind === 'quarantined' ? 'quarantine' : 'catalog';
  const href = `${publicUrl.replace(/\/$/, '')}/console/${page}/${encodeURIComponent(e.tool_id)}`;
  const first = esc(headline(e, facts));
  const lines = [
    first,
    `*Tool* ${code(`${e.tool_id}@${e.version}`)} · *owner* ${code(team)}`,
    ...(Object.keys(facts).length > 0 ? [factLine(facts)] : []),
    `<${href}|Open in the console>`,
  ];
  return {
    text: first,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } }],
    toolgate: {
      type: `owner.${e.kind}`,
      link: href,
      team,
      tool_id: e.tool_id,
      tool_version: e.version,
      facts,
    },
  };
}
