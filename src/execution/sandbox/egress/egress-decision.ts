/**
 * @module What the egress proxy decided for one connection or request: readonly records the gate
 * copies into the audit record (resolved host and address, bytes), built by small factories.
 */

/** Error-catalogue code a denial maps to when the gate reports it. */
export type EgressDenyCode = 'EGRESS_DENIED' | 'BUDGET_EXCEEDED';

export interface EgressAllow {
  readonly kind: 'allow';
  readonly at: string;
  /** `CONNECT` for a tunnel, else the HTTP method of a plain request. */
  readonly method: string;
  readonly host: string;
  readonly port: number;
  /** The one address that was checked and then connected to. */
  readonly address: string;
  bytesOut: number;
  bytesIn: number;
}

export interface EgressDeny {
  readonly kind: 'deny';
  readonly at: string;
  readonly code: EgressDenyCode;
  /** Stable rule id, e.g. `egress.host_not_allowed`, `egress.address_forbidden`. */
  readonly rule: string;
  /** For humans; quotes untrusted input only through `excerpt`. */
  readonly message: string;
  readonly method?: string;
  readonly host?: string;
  readonly address?: string;
}

export type EgressDecision = EgressAllow | EgressDeny;

/** A refusal before anything was decided about a connection: the rule and why. */
export interface EgressRefusal {
  readonly rule: string;
  readonly message: string;
  readonly code?: EgressDenyCode;
}

export function refusal(rule: string, message: string, code?: EgressDenyCode): EgressRefusal {
  return code === undefined ? { rule, message } : { rule, message, code };
}

export function denyDecision(
  r: EgressRefusal,
  at: Date,
  where: { method?: string; host?: string; address?: string } = {},
): EgressDeny {
  return {
    kind: 'deny',
    at: at.toISOString(),
    code: r.code ?? 'EGRESS_DENIED',
    rule: r.rule,
    message: r.message,
    ...(where.method !== undefined ? { method: where.method } : {}),
    ...(where.host !== undefined ? { host: where.host } : {}),
    ...(where.address !== undefined ? { address: where.address } : {}),
  };
}

export function allowDecision(
  at: Date,
  where: { method: string; host: string; port: number; address: string },
): EgressAllow {
  return { kind: 'allow', at: at.toISOString(), ...where, bytesOut: 0, bytesIn: 0 };
}
