/**
 * @module The facts of one call as plain TypeScript, and their translation into a Cedar request
 * (principal, action, resource, context, entities) shaped by cedar-schema.ts.
 */
import type { CedarValueJson, EntityJson, EntityUidJson } from '@cedar-policy/cedar-wasm/nodejs';
import { canonicalJson } from '../../../core/canonical-json.js';
import { toFixedPoint } from '../../../core/exact-decimal.js';
import { CEDAR_TYPES, INVOKE_ACTION } from './cedar-schema.js';

export interface CedarAgent {
  readonly id: string;
  readonly owner: string;
  readonly capabilities: readonly string[];
}

export interface CedarUser {
  readonly id: string;
  readonly permissions: readonly string[];
}

export interface CedarTool {
  readonly id: string;
  readonly version: string;
  readonly action_class: string;
  readonly data_access: string;
  readonly egress: string;
  readonly access_tier: string;
  readonly owner: string;
  readonly provenance: string;
  readonly tags: readonly string[];
}

/** Session facts at the moment of the call. Every number must be an integer (a Cedar Long). */
export interface CedarContext {
  readonly session_id: string;
  readonly run_id: string;
  /** The user the agent acts for; `''` when none. */
  readonly on_behalf_of: string;
  readonly user_permissions: readonly string[];
  readonly private_data_read: boolean;
  /** Tools whose untrusted results entered the session (content/, step `result`); none when absent. */
  readonly untrusted_sources?: readonly string[];
  /** A result in the session held instruction-like text; false when absent. */
  readonly injection_seen?: boolean;
  /** Kinds of the call's argument values first seen in an untrusted result of the run; none when absent. */
  readonly untrusted_destinations?: readonly string[];
  readonly external_sends: number;
  readonly egress_bytes: number;
  readonly spend_cents: number;
  readonly hour_utc: number;
  /** `''` when the call has no destination. */
  readonly destination_host: string;
  /** The call's validated arguments; exposed to policies as entity tags (see cedar-schema.ts). */
  readonly arguments: Readonly<Record<string, unknown>>;
}

export interface CedarRequest {
  readonly agent: CedarAgent;
  /** Present when the agent acts on behalf of a user; becomes `context.user`. */
  readonly user?: CedarUser | undefined;
  readonly tool: CedarTool;
  readonly context: CedarContext;
}

/** The request as cedar-wasm takes it (without the policy set and schema). */
export interface CedarCall {
  readonly principal: EntityUidJson;
  readonly action: EntityUidJson;
  readonly resource: EntityUidJson;
  readonly context: Record<string, CedarValueJson>;
  readonly entities: EntityJson[];
}

export type CedarCallResult =
  | { readonly ok: true; readonly call: CedarCall }
  | { readonly ok: false; readonly message: string };

const LONG_FIELDS = ['external_sends', 'egress_bytes', 'spend_cents', 'hour_utc'] as const;

/** Cedar's decimal: a signed 64-bit count of 10^-4. */
const DECIMAL_PLACES = 4;
const DECIMAL_MIN = -(2n ** 63n);
const DECIMAL_MAX = 2n ** 63n - 1n;

/**
 * The Cedar `decimal` literal that holds this number exactly, or null when none does (more than
 * four decimal places, outside ±922337203685477.5807, NaN, not a number). Never rounds.
 */
export function cedarDecimalText(value: unknown): string | null {
  const units = toFixedPoint(value, DECIMAL_PLACES);
  if (units === null || units < DECIMAL_MIN || units > DECIMAL_MAX) return null;
  const abs = units < 0n ? -units : units;
  const scale = 10n ** BigInt(DECIMAL_PLACES);
  const fraction = (abs % scale).toString().padStart(DECIMAL_PLACES, '0');
  return `${units < 0n ? '-' : ''}${abs / scale}.${fraction}`;
}

/** True when the view a policy reads holds this number exactly (see numeric-reads.ts). */
export function exactIn(view: 'long' | 'decimal', value: number): boolean {
  return view === 'long' ? Number.isSafeInteger(value) : cedarDecimalText(value) !== null;
}

/** The argument entities are one per call, so a fixed id suffices. */
const CALL_ENTITY_ID = 'call';

/**
 * Never throws on malformed input it can detect: a non-integer Long or an argument with no JSON
 * form is reported so the engine can deny with a clear reason (Cedar's own message for a
 * fractional number is "data did not match any variant of untagged enum"). Type mismatches in
 * strings and sets are left to Cedar's request validation against the schema, which refuses them.
 */
export function toCedarCall(request: CedarRequest): CedarCallResult {
  const { agent, user, tool, context } = request;
  for (const field of LONG_FIELDS) {
    if (!Number.isSafeInteger(context[field])) {
      return { ok: false, message: `context.${field} must be an integer` };
    }
  }
  if (typeof context.arguments !== 'object' || context.arguments === null) {
    return { ok: false, message: 'context.arguments must be an object' };
  }
  const text: [string, string][] = [];
  const numeric: [string, number][] = [];
  const decimals: [string, CedarValueJson][] = [];
  const lists: [string, CedarValueJson][] = [];
  for (const [name, value] of Object.entries(context.arguments)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      // A list is also a set of its elements (strings as themselves, others as canonical JSON),
      // so a policy can test membership element by element (cedar-schema.ts).
      const members: string[] = [];
      for (const element of value) {
        if (typeof element === 'string') {
          members.push(element);
          continue;
        }
        try {
          members.push(canonicalJson(element));
        } catch {
          return { ok: false, message: 'an argument has no JSON representation' };
        }
      }
      lists.push([name, members]);
    }
    if (typeof value === 'string') {
      text.push([name, value]);
      continue;
    }
    let json: string;
    try {
      json = canonicalJson(value);
    } catch {
      return { ok: false, message: 'an argument has no JSON representation' };
    }
    text.push([name, json]);
    if (typeof value === 'number' && Number.isSafeInteger(value)) numeric.push([name, value]);
    const decimal = typeof value === 'number' ? cedarDecimalText(value) : null;
    if (decimal !== null) decimals.push([name, { __extn: { fn: 'decimal', arg: decimal } }]);
  }

  const principal = { type: CEDAR_TYPES.agent, id: agent.id };
  const resource = { type: CEDAR_TYPES.tool, id: tool.id };
  const argumentsUid = { type: CEDAR_TYPES.arguments, id: CALL_ENTITY_ID };
  const numericUid = { type: CEDAR_TYPES.numericArguments, id: CALL_ENTITY_ID };
  const decimalUid = { type: CEDAR_TYPES.decimalArguments, id: CALL_ENTITY_ID };
  const listUid = { type: CEDAR_TYPES.listArguments, id: CALL_ENTITY_ID };

  const entities: EntityJson[] = [
    {
      uid: principal,
      attrs: { id: agent.id, owner: agent.owner, capabilities: [...agent.capabilities] },
      parents: [],
    },
    {
      uid: resource,
      attrs: {
        id: tool.id,
        version: tool.version,
        action_class: tool.action_class,
        data_access: tool.data_access,
        egress: tool.egress,
        access_tier: tool.access_tier,
        owner: tool.owner,
        provenance: tool.provenance,
        tags: [...tool.tags],
      },
      parents: [],
    },
  ];
  // An absent entity answers `hasTag` with false, exactly as an empty one does, and the validator
  // allows `getTag` only behind `hasTag`; leaving empty ones out saves ~18 µs each per call.
  // Object.fromEntries defines own properties, so an argument named `__proto__` stays a tag.
  if (text.length > 0) {
    entities.push({ uid: argumentsUid, attrs: {}, parents: [], tags: Object.fromEntries(text) });
  }
  if (numeric.length > 0) {
    entities.push({ uid: numericUid, attrs: {}, parents: [], tags: Object.fromEntries(numeric) });
  }
  if (decimals.length > 0) {
    entities.push({ uid: decimalUid, attrs: {}, parents: [], tags: Object.fromEntries(decimals) });
  }
  if (lists.length > 0) {
    entities.push({ uid: listUid, attrs: {}, parents: [], tags: Object.fromEntries(lists) });
  }

  const cedarContext: Record<string, CedarValueJson> = {
    session_id: context.session_id,
    run_id: context.run_id,
    on_behalf_of: context.on_behalf_of,
    user_permissions: [...context.user_permissions],
    private_data_read: context.private_data_read,
    untrusted_sources: [...(context.untrusted_sources ?? [])],
    injection_seen: context.injection_seen ?? false,
    untrusted_destinations: [...(context.untrusted_destinations ?? [])],
    external_sends: context.external_sends,
    egress_bytes: context.egress_bytes,
    spend_cents: context.spend_cents,
    hour_utc: context.hour_utc,
    destination_host: context.destination_host,
    arguments: { __entity: argumentsUid },
    numeric_arguments: { __entity: numericUid },
    decimal_arguments: { __entity: decimalUid },
    list_arguments: { __entity: listUid },
  };
  if (user !== undefined) {
    const userUid = { type: CEDAR_TYPES.user, id: user.id };
    entities.push({
      uid: userUid,
      attrs: { id: user.id, permissions: [...user.permissions] },
      parents: [],
    });
    cedarContext.user = { __entity: userUid };
  }

  return {
    ok: true,
    call: { principal, action: INVOKE_ACTION, resource, context: cedarContext, entities },
  };
}
