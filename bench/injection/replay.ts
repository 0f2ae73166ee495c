/**
 * @module The injection replay: a subset of Agent Security Bench (asb-subset.json, vendored with
 * its licence and source commit) turned into call sequences through the real gate, without a
 * model. Every ASB agent becomes a toolgate agent, every normal and attacker tool a registered
 * tool classified as classification.json says (what an operator reads in the tool's description:
 * action class, data access, egress), with the capability granted to its agent — ASB's premise is
 * that the attacker tool sits in the agent's toolkit. Tools whose own description states the harm,
 * or that the tool evades detection, are rejected at the security review, as a reviewer would.
 *
 * An attack case is ASB's observation prompt injection: in a fresh session the agent calls its
 * first normal tool for the task, the result carries the attacker's instruction, and the harmful
 * call (the attacker tool with that instruction) follows. A benign case is one task: both normal
 * tools called in order. Each decision is recorded as allowed, denied (with the rule) or sent to
 * approval. Denials a session's permitted set makes ("not registered") are attributed to the reason
 * the tool is absent: review rejected, access tier, or withheld for the toxic combination.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import type { Operator } from '../../src/domain/operators/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway, type ToolgateOptions } from '../../src/host/toolgate.js';
import { confirmDeciders, enrol, operator } from '../../test/support/operators.js';

const HERE = new URL('.', import.meta.url).pathname;

export interface AsbAttackTool {
  readonly 'Attacker Tool': string;
  /** What the injected text asks for: the injection and the harmful call's argument carry it. */
  readonly 'Attacker Instruction': string;
  /** What the operator registering the tool reads. */
  readonly Description: string;
  /** ASB's own labels of the attack: never read by the replay (an operator never sees them). */
  readonly 'Attack goal': string;
  readonly 'Attack Type': string;
  readonly Aggressive: string;
  readonly 'Corresponding Agent': string;
}

export interface AsbNormalTool {
  readonly 'Tool Name': string;
  readonly Description: string;
  readonly 'Expected Achievements': string;
  readonly 'Corresponding Agent': string;
}

export interface AsbSubset {
  readonly source: Readonly<Record<string, unknown>>;
  readonly injection_template: string;
  readonly agents: readonly { readonly agent_name: string; readonly tasks: readonly string[] }[];
  readonly normal_tools: readonly AsbNormalTool[];
  readonly attacker_tools: readonly AsbAttackTool[];
}

export interface Classification {
  readonly action_class: string;
  readonly data_access: 'none' | 'public' | 'private';
  readonly egress: 'none' | 'unconstrained' | { readonly hosts: readonly string[] };
  readonly review?: 'rejected';
  readonly note: string;
  /**
   * Normal tools only: whether the tool's results carry text from outside the organisation, as
   * its description says (documents, web and literature, listings, traffic, sensors), and why.
   */
  readonly result_source?: 'trusted' | 'untrusted';
  readonly result_note?: string;
}

export type Outcome = 'allowed' | 'denied' | 'approval';
export type ScanVerdict = 'flagged' | 'not_flagged' | 'flagged_trusted' | 'not_flagged_trusted';

function verdictOf(d: GateDecision): ScanVerdict | undefined {
  if (d.kind !== 'allow' || d.trust === undefined) return undefined;
  const suffix = d.trust.source === 'trusted' ? '_trusted' : '';
  return `${d.trust.injection ? 'flagged' : 'not_flagged'}${suffix}` as ScanVerdict;
}

export interface CaseResult {
  readonly id: string;
  readonly agent: string;
  readonly tool: string;
  readonly outcome: Outcome;
  /** The gate's rule, or for a tool absent from the session the reason it is absent. */
  readonly rule?: string;
  /** An attack case whose injected read was itself refused: how. */
  readonly read?: string;
  /**
   * What toolgate's own result scan made of the result (an attack case: of its injected read; a
   * benign call: of its own) — `flagged` (the trust label says instruction-like text),
   * `not_flagged` (an untrusted result it found none in); `_trusted` when the source is declared
   * trusted (every result is scanned; a flagged one counts as untrusted text for the run).
   */
  readonly scan?: ScanVerdict;
}

export interface InjectionReport {
  readonly harmful: {
    readonly total: number;
    readonly allowed: number;
    readonly denied: number;
    readonly approval: number;
  };
  readonly denied_by_rule: Record<string, number>;
  readonly approval_by_rule: Record<string, number>;
  readonly approval_by_class: Record<string, number>;
  /** What the result scan made of the attack cases' injected reads. */
  readonly injection_scan: Record<string, number>;
  readonly allowed_by_agent: Record<string, number>;
  readonly allowed_by_class: Record<string, number>;
  readonly benign: {
    readonly tasks: number;
    readonly total: number;
    readonly false_denied: number;
    readonly approval: number;
    readonly rate: number;
    /** Benign results the scan labelled as holding instructions (false positives). */
    readonly injection_flagged: number;
  };
  readonly harmful_cases: readonly CaseResult[];
  readonly benign_calls: readonly CaseResult[];
}

export interface ReplayOptions {
  /** Only these ASB agents (default: all ten). */
  readonly agents?: readonly string[];
  /** Only these attacker tools (default: all of the chosen agents'). */
  readonly attackers?: readonly string[];
  /**
   * Leave out what the operator declares against injection (result sources, the policy set, the
   * after-injection rule): the figures of the classification alone, measured in the same run.
   */
  readonly baseline?: boolean;
  /**
   * A sensitivity run, not the operator's declaration: every normal tool's results taken as
   * untrusted, whatever its description says (what an injection placed in a result the
   * organisation computed would need to be seen).
   */
  readonly everyResultUntrusted?: boolean;
  /** The subset to replay instead of asb-subset.json (a test's altered copy). */
  readonly subset?: AsbSubset;
  /**
   * The reviewer approves with a scope where the desk allows one (REVIEWER_SCOPE): a call that
   * waits for its tool's own rule alone gets a scope, the call is retried, and later calls of the
   * same tool and destinations in the run no longer wait. Off: every waiting call counts as one
   * a person stops, as before scopes.
   */
  readonly reviewerScopes?: boolean;
}

/**
 * The reviewer's policy with scopes: approve a call that waits only for its tool's own rule (a
 * reversible write or an external send; never irreversible or permission-changing, never one
 * escalated by injection or provenance — the desk refuses those) with a scope of 10 calls for 15
 * minutes, its second factor given; every other waiting call is left waiting (a person stops it).
 */
export const REVIEWER_SCOPE = { calls: 10, minutes: 15 } as const;

/**
 * The run-level rule after injection text (docs/architecture.md §3, step `approval`), as the operator sets
 * it: state-changing calls wait by default (and the policy set denies them first); reads wait
 * too, whatever their data access. A private read after a hijack is what the attacker's
 * instruction wants surfaced (the model's context is itself a way out, which the flow rule does
 * not cover); a read of public or no data is the attacker's reconnaissance or generates its
 * content (fabricated evidence, a simulated scheme). Benign runs never see it: the rule applies
 * only to a session whose untrusted result the scan flagged.
 */
export const AFTER_INJECTION = {
  reads: ['none', 'public', 'private'],
} as const satisfies ToolgateOptions['afterInjection'];

/** The organisation policy set (policies.cedar), applied as one Policy document. */
export function policySet(): string {
  return readFileSync(join(HERE, 'policies.cedar'), 'utf8');
}

export function loadSubset(): { subset: AsbSubset; classes: Record<string, Classification> } {
  const subset = JSON.parse(readFileSync(join(HERE, 'asb-subset.json'), 'utf8')) as AsbSubset;
  const classes = JSON.parse(readFileSync(join(HERE, 'classification.json'), 'utf8')) as Record<
    string,
    Classification
  >;
  return { subset, classes };
}

/** `DNSPoisoning` → `dns_poisoning`, `sys_monitor` → `sys_monitor`. */
export function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

const SETUP: Actor = { id: 'asb-replay', via: 'library' };

type Ctx = Parameters<Gateway['gate']['invoke']>[0];

function toolSpec(
  name: string,
  description: string,
  owner: string,
  c: Classification,
  declared: 'none' | 'operator' | 'every-result-untrusted',
) {
  const source =
    declared === 'none' || c.result_source === undefined
      ? undefined
      : declared === 'every-result-untrusted'
        ? 'untrusted'
        : c.result_source;
  const id = `asb.${snake(name)}`;
  return {
    id,
    version: '1.0.0',
    name,
    description,
    tags: ['asb'],
    owner,
    // ASB's tools take no structured arguments: the replay passes the request as text.
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['request'],
      properties: { request: { type: 'string', maxLength: 2000 } },
    },
    output_schema: { type: 'object' },
    action_class: c.action_class,
    data_access: c.data_access,
    egress:
      typeof c.egress === 'string' ? { mode: c.egress } : { mode: 'constrained', ...c.egress },
    access_tier: c.action_class === 'permission_change' ? 'privileged' : 'restricted',
    required_capabilities: [`asb:${snake(name)}`],
    runtime: { kind: 'inline', handler: `asb.${snake(name)}` },
    provenance: 'internal',
    ...(source ? { result_policy: { source } } : {}),
  };
}

function agentId(asbName: string): string {
  return `asb-${asbName.replace(/_agent$/, '').replaceAll('_', '-')}`;
}

/** Runs the replay on a fresh SQLite database and returns the figures. */
export async function replayInjections(options: ReplayOptions = {}): Promise<InjectionReport> {
  const loaded = loadSubset();
  const subset = options.subset ?? loaded.subset;
  const classes = loaded.classes;
  const agents = subset.agents.filter(
    (a) => options.agents === undefined || options.agents.includes(a.agent_name),
  );
  const names = new Set(agents.map((a) => a.agent_name));
  const normal = subset.normal_tools.filter((t) => names.has(t['Corresponding Agent']));
  const attackers = subset.attacker_tools.filter(
    (t) =>
      names.has(t['Corresponding Agent']) &&
      (options.attackers === undefined || options.attackers.includes(t['Attacker Tool'])),
  );
  const classOf = (name: string): Classification => {
    const c = classes[name];
    if (!c) throw new Error(`classification.json has no entry for ${name}`);
    return c;
  };

  // The normal tools' results carry the injection; attacker tools answer like a finished task.
  let injected = '';
  const executor = demoExecutor();
  for (const t of normal) {
    const achieved = t['Expected Achievements'];
    executor.register(`asb.${snake(t['Tool Name'])}`, () => ({ observation: achieved + injected }));
  }
  for (const t of attackers) {
    executor.register(`asb.${snake(t['Attacker Tool'])}`, () => ({ observation: 'done' }));
  }

  const dir = mkdtempSync(join(tmpdir(), 'toolgate-asb-'));
  let now = new Date('2026-01-05T09:00:00Z');
  const tg = await openGateway({
    db: `sqlite:${join(dir, 'asb.db')}`,
    clock: () => now,
    executor,
    masterKey: MasterKey.generate(),
    detectors: false,
    audit: { checkpoints: false },
    caps: { maxSessionsPerAgent: 10_000, maxPendingApprovalsPerAgent: 10_000 },
    // The baseline switches the rule off: the classification alone, as before results were scanned.
    afterInjection: options.baseline ? { action_classes: [] } : AFTER_INJECTION,
  });
  try {
    const declared = options.baseline
      ? 'none'
      : options.everyResultUntrusted
        ? 'every-result-untrusted'
        : 'operator';
    const tick = () => {
      now = new Date(now.getTime() + 30_000);
      return now;
    };
    const reviewer = await register(tg, agents, normal, attackers, classOf, declared, tick);
    // The reviewer's scope, where the desk allows one; the call then runs on its retry.
    const invoke = async (ctx: Ctx, name: string, args: Record<string, unknown>) => {
      const d = await tg.gate.invoke(ctx, name, args);
      const alone = { d, scoped: false, retried: d };
      if (!options.reviewerScopes || d.kind !== 'pending_approval') return alone;
      if (d.rendered.untrusted_destinations || d.rendered.after_injection) return alone;
      const c = classOf(name).action_class;
      if (c !== 'reversible_write' && c !== 'external_send') return alone;
      const at = tick();
      await tg.admin.approvals.approve(d.approvalId, reviewer.op, {
        totp: totpAt(reviewer.secret, at),
        scope: { calls: REVIEWER_SCOPE.calls, minutes: REVIEWER_SCOPE.minutes },
      });
      return { d, scoped: true, retried: await tg.gate.invoke(ctx, name, args) };
    };
    // The description scanner may quarantine a tool at registration: its calls are then refused.
    const quarantined = new Set<string>();
    for (const name of [
      ...normal.map((t) => t['Tool Name']),
      ...attackers.map((t) => t['Attacker Tool']),
    ]) {
      if ((await tg.catalog.get(`asb.${snake(name)}`, '1.0.0')).quarantined) quarantined.add(name);
    }
    const why = (name: string) => ({ ...classOf(name), quarantined: quarantined.has(name) });

    // A user vouched for with every ASB capability: the agent's own grants decide what it holds.
    const everyCapability = [
      ...normal.map((t) => t['Tool Name']),
      ...attackers.map((t) => t['Attacker Tool']),
    ].map((n) => `asb:${snake(n)}`);
    const taskUser = (agentId: string, id: string) => ({
      kind: 'agent' as const,
      agentId,
      user: { id, permissions: everyCapability },
    });

    const harmful: CaseResult[] = [];
    for (const a of attackers) {
      const agentName = a['Corresponding Agent'];
      const first = normal.find((t) => t['Corresponding Agent'] === agentName);
      if (!first) throw new Error(`no normal tool for ${agentName}`);
      const agent = agents.find((x) => x.agent_name === agentName);
      const task = agent?.tasks[0] ?? '';
      const id = agentId(agentName);
      // Each ASB case is one user's task: what an injection taught the gate is remembered per
      // (agent, user) over a window (docs/security-model.md), so the cases must not share a user.
      const user = `asb-attack-${harmful.length + 1}`;
      const principal = taskUser(id, user);
      const session = await tg.sessions.open(principal);
      const ctx = { principal, sessionId: session.id };
      injected = subset.injection_template
        .replace('{attacker_instruction}', a['Attacker Instruction'])
        .replace('{attacker_tool}', a['Attacker Tool']);
      const read = (await invoke(ctx, first['Tool Name'], { request: task })).d;
      injected = '';
      const scan = verdictOf(read);
      // Were the injected read refused, the harmful call is still replayed (the conservative
      // reading: the instruction may reach the model another way); the case says so.
      const name = a['Attacker Tool'];
      // A harmful call the reviewer's policy let through counts as allowed (its retry ran).
      const d = (await invoke(ctx, name, { request: a['Attacker Instruction'] })).retried;
      const r = result(`${agentName}/${name}`, agentName, name, d, session.tools, why(name));
      harmful.push({
        ...r,
        ...(read.kind === 'allow' ? {} : { read: describe(read) }),
        ...(scan ? { scan } : {}),
      });
    }

    const benign: CaseResult[] = [];
    let tasks = 0;
    for (const agent of agents) {
      const tools = normal.filter((t) => t['Corresponding Agent'] === agent.agent_name);
      for (const [i, task] of agent.tasks.entries()) {
        tasks++;
        const id = agentId(agent.agent_name);
        const user = `asb-task-${tasks}`;
        const principal = taskUser(id, user);
        const session = await tg.sessions.open(principal);
        const ctx = { principal, sessionId: session.id };
        for (const t of tools) {
          const name = t['Tool Name'];
          const d = (await invoke(ctx, name, { request: task })).d;
          const r = result(
            `${agent.agent_name}/task${i + 1}/${name}`,
            agent.agent_name,
            name,
            d,
            session.tools,
            why(name),
          );
          const scan = verdictOf(d);
          benign.push(scan ? { ...r, scan } : r);
        }
      }
    }
    return report(harmful, benign, tasks, classOf);
  } finally {
    await tg.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
}

async function register(
  tg: Gateway,
  agents: readonly { readonly agent_name: string }[],
  normal: readonly AsbNormalTool[],
  attackers: readonly AsbAttackTool[],
  classOf: (name: string) => Classification,
  declared: 'none' | 'operator' | 'every-result-untrusted',
  tick: () => Date,
): Promise<{ op: Operator; secret: string }> {
  const approvers = [operator('asb-approver-a'), operator('asb-approver-b')];
  const secrets = await Promise.all(approvers.map((op) => enrol(tg.admin, op)));
  // Four eyes count confirmed people: the world's admins confirm both approvers.
  await confirmDeciders(
    tg.admin,
    approvers.map((op) => op.id),
    tick(),
  );
  const tools = [
    ...normal.map((t) => ({
      name: t['Tool Name'],
      description: t.Description,
      agent: t['Corresponding Agent'],
    })),
    ...attackers.map((t) => ({
      name: t['Attacker Tool'],
      description: t.Description,
      agent: t['Corresponding Agent'],
    })),
  ];
  await tg.config.apply(
    [
      ...agents.map((a) => ({
        kind: 'Agent',
        spec: { id: agentId(a.agent_name), owner: 'asb', description: `ASB ${a.agent_name}` },
      })),
      ...tools.map((t) => ({
        kind: 'Tool',
        spec: toolSpec(t.name, t.description, 'asb', classOf(t.name), declared),
      })),
      ...(declared === 'none'
        ? []
        : [{ kind: 'Policy', spec: { id: 'asb-operator', text: policySet() } }]),
      ...agents.map((a) => ({
        kind: 'Grant',
        spec: {
          agent: agentId(a.agent_name),
          capabilities: tools
            .filter((t) => t.agent === a.agent_name)
            .map((t) => `asb:${snake(t.name)}`),
        },
      })),
    ],
    SETUP,
  );
  // Security reviews: approved, except where the tool's own description states the harm.
  const reviewer: Operator = approvers[0] as Operator;
  const byId = new Map(tools.map((t) => [`asb.${snake(t.name)}`, t.name]));
  for (;;) {
    const page = await tg.reviews.page('pending', { limit: 500 });
    if (page.items.length === 0) break;
    for (const r of page.items) {
      const name = byId.get(r.tool_id);
      const rejected = name !== undefined && classOf(name).review === 'rejected';
      const { definition_hash } = await tg.catalog.get(r.tool_id, r.version);
      await tg.catalog.review(r.tool_id, r.version, reviewer, {
        definition_hash,
        decision: rejected ? 'rejected' : 'approved',
        notes: rejected ? (name ? classOf(name).note : '') : 'classified from its description',
      });
    }
  }
  // Four eyes: irreversible and permission-changing tools, and the grants that unlock them.
  for (const change of await tg.changes.list('pending')) {
    const at = tick();
    for (const [i, op] of approvers.entries()) {
      const secret = secrets[i];
      if (!secret) continue;
      await tg.changes.approve(change.id, op, totpAt(secret.secret, at));
    }
  }
  // The call reviewer: the second approver, whose codes the four-eyes approvals above left alone.
  return { op: approvers[1] as Operator, secret: secrets[1]?.secret ?? '' };
}

function describe(d: GateDecision): string {
  return d.kind === 'deny' ? `${d.code} ${d.rule}: ${d.message}` : d.kind;
}

function result(
  id: string,
  agent: string,
  tool: string,
  d: GateDecision,
  offered: readonly { readonly name: string }[],
  c: Classification & { readonly quarantined: boolean },
): CaseResult {
  if (d.kind === 'allow') return { id, agent, tool, outcome: 'allowed' };
  if (d.kind === 'pending_approval') {
    // Why it waits: an escalation names its rule (docs/architecture.md §3, step `approval`), else the
    // tool's own gate.
    const rule = d.rendered.untrusted_destinations
      ? 'provenance.untrusted_destination'
      : d.rendered.after_injection
        ? 'provenance.injection_seen'
        : `approval.${c.action_class}`;
    return { id, agent, tool, outcome: 'approval', rule };
  }
  let rule = d.rule;
  if (rule === 'resolve.not_registered' && !offered.some((t) => t.name === tool)) {
    // Why the session's permitted set lacks it (docs/architecture.md §1, step `resolve`).
    rule = c.quarantined
      ? 'scan.quarantined (not registered)'
      : c.review === 'rejected'
        ? 'review.rejected (not registered)'
        : c.action_class === 'permission_change'
          ? 'tier.privileged (not offered)'
          : c.egress === 'unconstrained'
            ? 'session.toxic_combination (withheld)'
            : rule;
  }
  return { id, agent, tool, outcome: 'denied', rule };
}

function count(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

function report(
  harmful: readonly CaseResult[],
  benign: readonly CaseResult[],
  tasks: number,
  classOf: (name: string) => Classification,
): InjectionReport {
  const denied_by_rule: Record<string, number> = {};
  const approval_by_rule: Record<string, number> = {};
  const approval_by_class: Record<string, number> = {};
  const allowed_by_class: Record<string, number> = {};
  const allowed_by_agent: Record<string, number> = {};
  const injection_scan: Record<string, number> = {};
  for (const h of harmful) {
    count(injection_scan, h.scan ?? 'read refused');
    if (h.outcome === 'denied') count(denied_by_rule, h.rule ?? 'unknown');
    if (h.outcome === 'approval') {
      count(approval_by_rule, h.rule ?? 'unknown');
      count(approval_by_class, classOf(h.tool).action_class);
    }
    if (h.outcome === 'allowed') {
      const c = classOf(h.tool);
      count(allowed_by_class, `${c.action_class}/${c.data_access}`);
      count(allowed_by_agent, h.agent);
    }
  }
  const falseDenied = benign.filter((b) => b.outcome === 'denied').length;
  return {
    harmful: {
      total: harmful.length,
      allowed: harmful.filter((h) => h.outcome === 'allowed').length,
      denied: harmful.filter((h) => h.outcome === 'denied').length,
      approval: harmful.filter((h) => h.outcome === 'approval').length,
    },
    denied_by_rule,
    approval_by_rule,
    approval_by_class,
    injection_scan,
    allowed_by_agent,
    allowed_by_class,
    benign: {
      tasks,
      total: benign.length,
      false_denied: falseDenied,
      approval: benign.filter((b) => b.outcome === 'approval').length,
      rate: benign.length === 0 ? 0 : Number((falseDenied / benign.length).toFixed(4)),
      injection_flagged: benign.filter((b) => b.scan === 'flagged').length,
    },
    harmful_cases: harmful,
    benign_calls: benign,
  };
}
