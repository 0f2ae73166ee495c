/**
 * @module What a reviewer is told, as a Slack-compatible message (`text`, and `blocks` with one
 * mrkdwn section) plus the same facts as data, with a link to the console item. Built from ids,
 * tool id and version, action class, agent id, condition names and counts only: never argument
 * values, descriptions, findings' text or anything else an agent or a tool author wrote.
 */

/** The facts of a new pending approval (an `ApprovalView` has them all). */
export interface PendingApprovalFacts {
  readonly id: string;
  readonly agent_id: string;
  readonly tool_id: string;
  readonly tool_version: string;
  readonly action_class: string;
  readonly second_factor: boolean;
  readonly expires_at: string;
  readonly rendered: { readonly conditions: readonly unknown[] };
}

export interface QuarantineFacts {
  readonly toolId: string;
  readonly version: string;
  readonly findings: number;
}

export interface AlertFacts {
  readonly id: string;
  readonly detector: string;
  readonly agentId: string | null;
  readonly toolId: string | null;
  readonly toolVersion: string | null;
  readonly suspended: boolean;
}

/** A four-eyes change waiting for approvers: a gated tool version, or a grant request. */
export interface ChangeFacts {
  readonly id: string;
  readonly kind: 'tool' | 'grant';
  readonly toolId: string | null;
  readonly version: string | null;
  readonly agentId: string | null;
  readonly capability: string | null;
  readonly required: number;
}

/** A security review waiting for a reviewer: the version and the names of its reasons. */
export interface ReviewFacts {
  readonly id: string;
  readonly toolId: string;
  readonly version: string;
  readonly reasons: readonly string[];
}

export const NOTIFICATION_KINDS = [
  'approval.pending',
  'change.pending',
  'grant.pending',
  'review.pending',
  'tool.quarantined',
  'alert.raised',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface NotificationPayload {
  readonly text: string;
  readonly blocks: readonly [
    { readonly type: 'section'; readonly text: { readonly type: 'mrkdwn'; readonly text: string } },
  ];
  readonly toolgate: { readonly type: NotificationKind; readonly link: string } & Readonly<
    Record<string, unknown>
  >;
}

/** Slack's three control characters escaped, and backticks (our code spans) removed. */
function esc(value: string): string {
  return value
    .slice(0, 200)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/`/g, "'");
}

const code = (value: string) => `\`${esc(value)}\``;

function link(publicUrl: string, path: string, id: string): string {
  return `${publicUrl.replace(/\/$/, '')}/console/${path}/${encodeURIComponent(id)}`;
}

function message(
  type: NotificationKind,
  lines: readonly string[],
  href: string,
  facts: Readonly<Record<string, unknown>>,
): NotificationPayload {
  const body = `${lines.join('\n')}\n<${href}|Open in the console>`;
  return {
    text: lines[0] ?? type,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: body } }],
    toolgate: { type, link: href, ...facts },
  };
}

/**
 * A condition's name: the argument it looks at and its operator (`/amount gt`), not the value it
 * compares with nor the call's value.
 */
function conditionName(c: unknown): string | null {
  if (typeof c !== 'object' || c === null) return null;
  const { argument, op } = c as { argument?: unknown; op?: unknown };
  return typeof argument === 'string' && typeof op === 'string' ? `${argument} ${op}` : null;
}

export function pendingApprovalMessage(
  a: PendingApprovalFacts,
  publicUrl: string,
): NotificationPayload {
  const conditions = a.rendered.conditions
    .map(conditionName)
    .filter((n): n is string => n !== null)
    .slice(0, 20);
  const href = link(publicUrl, 'approvals', a.id);
  return message(
    'approval.pending',
    [
      esc(
        `Approval needed: ${a.tool_id}@${a.tool_version} (${a.action_class}) for agent ${a.agent_id}`,
      ),
      `*Tool* ${code(`${a.tool_id}@${a.tool_version}`)} · *action* ${code(a.action_class)} · *agent* ${code(a.agent_id)}`,
      conditions.length > 0
        ? `*Conditions* ${conditions.map(code).join(', ')}`
        : '*Conditions* always reviewed',
      `*Second factor* ${a.second_factor ? 'required' : 'not required'} · *expires* ${esc(a.expires_at)}`,
    ],
    href,
    {
      approval_id: a.id,
      tool_id: a.tool_id,
      tool_version: a.tool_version,
      action_class: a.action_class,
      agent_id: a.agent_id,
      conditions,
      second_factor: a.second_factor,
      expires_at: a.expires_at,
    },
  );
}

export function quarantineMessage(q: QuarantineFacts, publicUrl: string): NotificationPayload {
  const href = link(publicUrl, 'quarantine', q.toolId);
  return message(
    'tool.quarantined',
    [
      esc(
        `Tool quarantined: ${q.toolId}@${q.version} (${q.findings} finding${q.findings === 1 ? '' : 's'})`,
      ),
      `*Tool* ${code(`${q.toolId}@${q.version}`)} is no longer offered until an approver releases it.`,
    ],
    href,
    { tool_id: q.toolId, tool_version: q.version, findings: q.findings },
  );
}

export function alertMessage(a: AlertFacts, publicUrl: string): NotificationPayload {
  const href = link(publicUrl, 'alerts', a.id);
  const tool = a.toolId ? `${a.toolId}${a.toolVersion ? `@${a.toolVersion}` : ''}` : null;
  return message(
    'alert.raised',
    [
      esc(`Detector alert: ${a.detector}${a.agentId ? ` for agent ${a.agentId}` : ''}`),
      [
        `*Detector* ${code(a.detector)}`,
        ...(a.agentId ? [`*agent* ${code(a.agentId)}`] : []),
        ...(tool ? [`*tool* ${code(tool)}`] : []),
        a.suspended ? '*session suspended*' : 'session not suspended',
      ].join(' · '),
    ],
    href,
    {
      alert_id: a.id,
      detector: a.detector,
      agent_id: a.agentId,
      tool_id: a.toolId,
      tool_version: a.toolVersion,
      suspended: a.suspended,
    },
  );
}

export function changeMessage(c: ChangeFacts, publicUrl: string): NotificationPayload {
  const href = link(publicUrl, 'changes', c.id);
  const what =
    c.kind === 'grant'
      ? `grant ${c.capability ?? '?'} to agent ${c.agentId ?? '?'}`
      : `activate ${c.toolId ?? '?'}@${c.version ?? '?'}`;
  return message(
    c.kind === 'grant' ? 'grant.pending' : 'change.pending',
    [
      esc(`Four-eyes ${c.kind === 'grant' ? 'grant request' : 'change'}: ${what}`),
      `*Change* ${code(c.id)} · ${code(what)} · *approvers needed* ${c.required}`,
    ],
    href,
    {
      change_id: c.id,
      change_kind: c.kind,
      tool_id: c.toolId,
      tool_version: c.version,
      agent_id: c.agentId,
      capability: c.capability,
      required: c.required,
    },
  );
}

export function reviewMessage(r: ReviewFacts, publicUrl: string): NotificationPayload {
  const href = link(publicUrl, 'reviews', r.id);
  const reasons = r.reasons.slice(0, 10);
  return message(
    'review.pending',
    [
      esc(`Security review needed: ${r.toolId}@${r.version}`),
      `*Tool* ${code(`${r.toolId}@${r.version}`)} · *why* ${reasons.map(code).join(', ') || 'review required'}`,
    ],
    href,
    { review_id: r.id, tool_id: r.toolId, tool_version: r.version, reasons },
  );
}
