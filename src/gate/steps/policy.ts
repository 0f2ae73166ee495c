/**
 * @module The `policy` step: URL and path arguments are checked against the tool's argument policy
 * and rewritten to their checked form (the tool gets the contained real path, never the caller's
 * spelling of it), code arguments pass the static code guard, then the org policy (Cedar)
 * decides when one applies. Policies that cannot be
 * loaded never mean "no policies": the call is refused. Step order: docs/architecture.md §3.
 */

import { expandTemplate } from '../../domain/catalog/index.js';
import {
  checkCode,
  checkDestination,
  checkPath,
  checkUrl,
  destinationValues,
  type PolicyEngine,
  UNCHECKABLE_CODE_RULES,
  valuesAt,
} from '../../domain/policy/index.js';
import {
  sessionPermissions,
  tokenCapabilities,
  untrustedSourcesOf,
} from '../../domain/sessions/index.js';
import { lookUpUntrustedDestinations, untrustedDestinationKinds } from './provenance.js';
import { type CallState, CONTINUE, type Refusal, refuse, type StepResult } from './step.js';

const POLICIES_UNAVAILABLE: Refusal = {
  kind: 'refuse',
  code: 'POLICY_DENIED',
  rule: 'cedar.unavailable',
  message: 'organisation policies could not be loaded',
};

export function policyStep(s: CallState): StepResult | Promise<StepResult> {
  const def = s.def;
  s.hosts = def.egress.mode === 'constrained' ? def.egress.hosts : [];
  s.destinations = new Set<string>();
  // A resources/read was matched to this template by `resolve`; a call naming the template's
  // catalog id (tools/call, REST) is checked here, once.
  if (
    def.runtime.kind === 'mcp' &&
    def.runtime.entry?.kind === 'resource_template' &&
    s.readUri === null
  ) {
    return templateUri(s, def.runtime.entry.uri_template);
  }
  return argumentsThenOrg(s);
}

function argumentsThenOrg(s: CallState): StepResult | Promise<StepResult> {
  return s.compiled.targets.length > 0 ? argumentPolicy(s) : destinationsThenOrg(s);
}

const URI_NOT_THIS_TEMPLATE: Refusal = {
  kind: 'refuse',
  code: 'POLICY_DENIED',
  rule: 'resource.not_this_template',
  message: "the URI these arguments give is not this resource template's to read",
};

/**
 * A template's read, whichever front asked for it (resources/read, or a tool call naming the
 * entry): the URI its arguments expand to must name this template and nothing else over every
 * provider's resources and templates (docs/security-model.md "Resources and templates: one URI,
 * one governed thing"). A static resource is never read through a template.
 */
async function templateUri(s: CallState, template: string): Promise<StepResult> {
  const governed = s.deps.governedUris;
  const uri = expandTemplate(template, s.callArgs);
  if (governed === undefined || uri === null) return URI_NOT_THIS_TEMPLATE;
  const self = { id: s.detail.id, kind: 'resource_template', key: template, listed: true } as const;
  const named = await governed.resolve(uri, [self]);
  if (named?.kind !== 'resource_template' || named.id !== s.detail.id) return URI_NOT_THIS_TEMPLATE;
  return argumentsThenOrg(s);
}

function destinationsThenOrg(s: CallState): StepResult | Promise<StepResult> {
  return s.def.destinations === undefined ? orgPolicy(s) : destinationPolicy(s);
}

/**
 * Destinations that are not hosts (docs/architecture.md §3 step `policy`): every value a rule names,
 * element by element, against its allow-list; the first outside it refuses the call with its
 * pointer and rule (never the list). A value that passes is passed on normalised (the tool gets
 * what was checked), except a URL, whose host was checked and whose spelling the URL policy owns.
 */
async function destinationPolicy(s: CallState): Promise<StepResult> {
  for (const rule of s.def.destinations ?? []) {
    for (const at of destinationValues(s.callArgs, rule)) {
      // A nullable recipient's null names nobody (the schema step allowed it): nothing to check
      // and nothing to send to; every string value is checked as ever.
      if (at.value === null) continue;
      const verdict = await checkDestination(rule, at, s.deps.destinationSets);
      if (!verdict.ok) {
        return refuse('DESTINATION_NOT_ALLOWED', verdict.rule, verdict.message, {
          argument: verdict.pointer,
        });
      }
      if (rule.kind !== 'url') setAt(s.callArgs, at.pointer, verdict.value);
    }
  }
  return orgPolicy(s);
}

/**
 * URL and path arguments, each rewritten to its checked form; code arguments judged by the
 * static code guard (docs/architecture.md §3: still before any sandbox starts).
 */
async function argumentPolicy(s: CallState): Promise<StepResult> {
  const def = s.def;
  const callArgs = s.callArgs;
  const hosts = s.hosts;
  for (const target of s.compiled.targets) {
    for (const { pointer, value } of valuesAt(callArgs, target.pointer)) {
      if (target.kind === 'url') {
        const verdict = checkUrl(value, {
          hosts: def.egress.mode === 'unconstrained' ? 'any' : hosts,
        });
        if (!verdict.ok)
          return refuse('POLICY_DENIED', verdict.rule, `${pointer}: ${verdict.message}`);
        s.destinations.add(verdict.value.host);
        setAt(callArgs, pointer, verdict.value.url);
      } else if (target.kind === 'code') {
        const verdict = await checkCode(value, target.language ?? 'javascript');
        if (!verdict.ok) {
          const code = UNCHECKABLE_CODE_RULES.has(verdict.rule)
            ? 'CODE_UNCHECKABLE'
            : 'CODE_REFUSED';
          return refuse(code, verdict.rule, `${pointer}: ${verdict.message}`);
        }
      } else {
        const verdict = await checkPath(value, { roots: def.arguments_policy.path_roots ?? [] });
        if (!verdict.ok)
          return refuse('POLICY_DENIED', verdict.rule, `${pointer}: ${verdict.message}`);
        setAt(callArgs, pointer, verdict.value.path);
      }
    }
  }
  return destinationsThenOrg(s);
}

/** The org policy engine, without an await once it is loaded. */
function orgPolicy(s: CallState): StepResult | Promise<StepResult> {
  // Values first seen in untrusted results, for Cedar and the approval step (provenance.ts).
  const lookup = lookUpUntrustedDestinations(s);
  return lookup === undefined ? loadedPolicy(s) : lookup.then(() => loadedPolicy(s));
}

function loadedPolicy(s: CallState): StepResult | Promise<StepResult> {
  const loaded = s.deps.tools.loadedPolicyEngine;
  return loaded === undefined ? loadThenDecide(s) : decide(s, loaded);
}

async function loadThenDecide(s: CallState): Promise<StepResult> {
  let policy: PolicyEngine | null;
  try {
    policy = await s.deps.tools.policyEngine();
  } catch {
    s.deps.tools.dropPolicyEngine();
    return POLICIES_UNAVAILABLE;
  }
  return decide(s, policy);
}

function decide(s: CallState, policy: PolicyEngine | null): StepResult | Promise<StepResult> {
  const def = s.def;
  if (!policy?.appliesTo({ id: s.detail.id, action_class: def.action_class, tags: def.tags })) {
    return CONTINUE;
  }
  const session = s.session;
  // Policies that test the session's counters decide on their stored values; a token's user
  // without its own permissions is read (through the identity cache).
  if (
    policy.readsSessionCounters !== false ||
    (session.user_id && session.user_permissions === null)
  ) {
    return readThenEvaluate(s, policy);
  }
  return evaluate(s, policy, userOf(s));
}

async function readThenEvaluate(s: CallState, policy: PolicyEngine): Promise<StepResult> {
  if (policy.readsSessionCounters !== false) {
    s.session = await s.deps.identities.freshSession(s.ctx.sessionId, s.ctx.principal, s.session);
  }
  const session = s.session;
  const user =
    session.user_id && session.user_permissions === null
      ? await s.deps.identities.loadUser(session.user_id)
      : userOf(s);
  return evaluate(s, policy, user);
}

/**
 * The session's user as a token vouched for it (an OAuth user: this request's token), or null
 * when it acts for nobody.
 */
function userOf(
  s: CallState,
): { readonly id: string; readonly permissions: readonly string[] } | null {
  const session = s.session;
  if (!session.user_id || session.user_permissions === null) return null;
  const token = tokenCapabilities(s.ctx.principal);
  const permissions = sessionPermissions(session, token, token ?? []) ?? [];
  return { id: session.user_id, permissions };
}

function evaluate(
  s: CallState,
  policy: PolicyEngine,
  user: { readonly id: string; readonly permissions: readonly string[] } | null,
): StepResult {
  const def = s.def;
  const session = s.session;
  const agent = s.agent;
  const decision = policy.evaluate({
    agent: { id: agent.id, owner: agent.owner, capabilities: agent.capabilities },
    ...(user ? { user: { id: user.id, permissions: user.permissions } } : {}),
    tool: {
      id: s.detail.id,
      version: s.detail.version,
      action_class: def.action_class,
      data_access: def.data_access,
      egress: def.egress.mode,
      access_tier: def.access_tier,
      owner: def.owner,
      provenance: def.provenance,
      tags: def.tags,
    },
    context: {
      session_id: session.id,
      run_id: session.run_id,
      on_behalf_of: session.user_id ?? '',
      user_permissions: user?.permissions ?? [],
      private_data_read: session.private_data_read === 1,
      untrusted_sources: [
        ...new Set([
          ...untrustedSourcesOf(session.untrusted_sources),
          ...(s.injectionElsewhere ?? []),
        ]),
      ],
      injection_seen: session.injection_seen === 1 || s.injectionElsewhere !== null,
      untrusted_destinations: untrustedDestinationKinds(s),
      external_sends: session.external_sends,
      egress_bytes: session.egress_bytes,
      spend_cents: session.spend_cents,
      hour_utc: s.now.getUTCHours(),
      destination_host: [...s.destinations][0] ?? '',
      arguments: s.callArgs,
    },
  });
  if (decision.decision === 'deny') {
    // Cedar's reasons can quote request values: the audit keeps the policy id; the caller gets
    // the policy's own @reason when it has one.
    return refuse(
      'POLICY_DENIED',
      decision.rule ?? `cedar.${decision.policies[0] ?? 'forbid'}`,
      decision.reasons[0] ?? 'forbidden by policy',
    );
  }
  return CONTINUE;
}

/** Replaces the value at a concrete JSON pointer (as valuesAt returns them) in place. */
export function setAt(root: Record<string, unknown>, pointer: string, value: unknown): void {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = tokens.pop();
  if (last === undefined) return;
  let node: unknown = root;
  for (const t of tokens) node = (node as Record<string, unknown>)[t];
  (node as Record<string, unknown>)[last] = value;
}
