/**
 * @module Which facts of a call a set of forbid policies can read, from their JSON form, and the
 * key those facts make: two requests with the same key get the same answer from Cedar (every
 * expression of every policy sees the same values), so the engine may reuse a decision.
 *
 * Conservative by construction: a narrow fact is recorded only for the exact shapes
 * `principal.a`, `resource.a`, `context.a`, `context.user.a` (as `.` or `has`) and a literal tag
 * of `context.arguments` / `numeric_arguments` / `decimal_arguments` / `list_arguments` (as `hasTag` or `getTag`); any other use
 * of a variable depends on the whole of it, and anything not understood (an unknown variable, a
 * template slot) turns reuse off for the whole set.
 */

import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { canonicalJson } from '../../../core/canonical-json.js';
import type { CedarRequest } from './cedar-request.js';
import { isNode, only } from './policy-json.js';

/** A fact of the request, e.g. `context.hour_utc`, `principal.*` (all of it), `arg:amount`. */
export type Fact = string;

/** The facts some policy reads, or `all` when reuse would not be safe. */
export type FactSet = { readonly all: true } | { readonly all: false; readonly facts: Set<Fact> };

const VARIABLES = new Set(['principal', 'action', 'resource', 'context']);
/** Context members that are entity references: reading through them reads another entity. */
const ENTITY_MEMBERS = new Set([
  'user',
  'arguments',
  'numeric_arguments',
  'decimal_arguments',
  'list_arguments',
]);

/** `principal`, `resource`, `context`, or `context.user|arguments|…_arguments`; else null. */
function pathOf(expr: unknown): string | null {
  if (!isNode(expr)) return null;
  const v = only(expr, 'Var');
  if (v === 'principal' || v === 'resource' || v === 'context') return v;
  const access = only(expr, '.');
  if (isNode(access) && typeof access.attr === 'string' && ENTITY_MEMBERS.has(access.attr)) {
    const left = access.left;
    if (isNode(left) && only(left, 'Var') === 'context') return `context.${access.attr}`;
  }
  return null;
}

class Collector {
  readonly facts = new Set<Fact>();
  all = false;

  expr(e: unknown): void {
    if (this.all) return;
    if (Array.isArray(e)) {
      for (const x of e) this.expr(x);
      return;
    }
    if (!isNode(e)) return;
    if ('Slot' in e) {
      this.all = true;
      return;
    }
    const v = only(e, 'Var');
    if (v !== undefined) {
      if (typeof v !== 'string' || !VARIABLES.has(v)) this.all = true;
      else if (v !== 'action') this.facts.add(`${v}.*`);
      return;
    }
    for (const op of ['.', 'has'] as const) {
      const access = only(e, op);
      if (isNode(access) && typeof access.attr === 'string' && 'left' in access) {
        const path = pathOf(access.left);
        if (path === null) this.expr(access.left);
        else this.facts.add(`${path}.${access.attr}`);
        return;
      }
    }
    for (const op of ['hasTag', 'getTag'] as const) {
      const access = only(e, op);
      // Cedar's JSON form names the tag operand `right`.
      if (isNode(access) && 'left' in access && 'right' in access) {
        const path = pathOf(access.left);
        const tag = isNode(access.right) ? only(access.right, 'Value') : undefined;
        if (
          (path === 'context.arguments' ||
            path === 'context.numeric_arguments' ||
            path === 'context.decimal_arguments' ||
            path === 'context.list_arguments') &&
          typeof tag === 'string'
        ) {
          this.facts.add(`arg:${tag}`);
        } else {
          this.expr(access.left);
          this.expr(access.right);
        }
        return;
      }
    }
    // Any other node: every part of it may read anything.
    for (const value of Object.values(e)) this.expr(value);
  }
}

/** The facts the given (forbid) policies read, scope and conditions together. */
export function factsRead(policies: readonly PolicyJson[]): FactSet {
  const c = new Collector();
  for (const p of policies) {
    const scope = p as unknown as Record<string, { op?: unknown } | undefined>;
    if (scope.principal?.op !== 'All') c.facts.add('principal.*');
    if (scope.resource?.op !== 'All') c.facts.add('resource.*');
    // The action is always Toolgate::Action::"invoke": its scope reads nothing that varies.
    c.expr(p.conditions as unknown);
  }
  return c.all ? { all: true } : { all: false, facts: c.facts };
}

const ABSENT = '\u0000absent';

function member(object: unknown, name: string): unknown {
  if (!isNode(object) || !Object.hasOwn(object, name)) return ABSENT;
  return object[name];
}

/** The value of one fact in a request (`ABSENT` marks a member that is not there). */
function factValue(request: CedarRequest, fact: Fact): unknown {
  if (fact.startsWith('arg:')) return member(request.context.arguments, fact.slice(4));
  const dot = fact.indexOf('.');
  const root = fact.slice(0, dot);
  const rest = fact.slice(dot + 1);
  if (root === 'principal') return rest === '*' ? request.agent : member(request.agent, rest);
  if (root === 'resource') return rest === '*' ? request.tool : member(request.tool, rest);
  // context
  if (rest === '*') return [request.context, request.user ?? ABSENT];
  if (rest === 'user') return request.user ?? ABSENT;
  if (rest.startsWith('user.')) return member(request.user, rest.slice(5));
  if (
    rest === 'arguments' ||
    rest === 'numeric_arguments' ||
    rest === 'decimal_arguments' ||
    rest === 'list_arguments'
  ) {
    return request.context.arguments;
  }
  return member(request.context, rest);
}

/** The key of a request under these facts (sorted): equal keys, equal facts. Throws on no JSON. */
export function factKey(request: CedarRequest, facts: readonly Fact[]): string {
  let key = '';
  for (const fact of facts) key += `${canonicalJson(factValue(request, fact))}\n`;
  return key;
}

/** True only when every value of the request has the type the toolgate schema gives it. */
export function wellTyped(request: CedarRequest): boolean {
  const { agent, tool, context, user } = request;
  const str = (x: unknown) => typeof x === 'string';
  const strs = (x: unknown) => Array.isArray(x) && x.every(str);
  const long = (x: unknown) => Number.isSafeInteger(x);
  return (
    isNode(agent) &&
    str(agent.id) &&
    str(agent.owner) &&
    strs(agent.capabilities) &&
    isNode(tool) &&
    [
      tool.id,
      tool.version,
      tool.action_class,
      tool.data_access,
      tool.egress,
      tool.access_tier,
      tool.owner,
      tool.provenance,
    ].every(str) &&
    strs(tool.tags) &&
    isNode(context) &&
    [context.session_id, context.run_id, context.on_behalf_of, context.destination_host].every(
      str,
    ) &&
    strs(context.user_permissions) &&
    typeof context.private_data_read === 'boolean' &&
    (context.untrusted_sources === undefined || strs(context.untrusted_sources)) &&
    (context.injection_seen === undefined || typeof context.injection_seen === 'boolean') &&
    (context.untrusted_destinations === undefined || strs(context.untrusted_destinations)) &&
    [context.external_sends, context.egress_bytes, context.spend_cents, context.hour_utc].every(
      long,
    ) &&
    isNode(context.arguments) &&
    (user === undefined || (isNode(user) && str(user.id) && strs(user.permissions)))
  );
}
