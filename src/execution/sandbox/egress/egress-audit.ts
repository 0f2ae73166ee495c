/**
 * @module What one run's egress puts into its audit record (C12: resolved egress host, bytes
 * out): the lease's stats reduced to the record's fields. (The http runtime reports the same
 * fields of its own request.)
 */
import type { LeaseStats } from './egress-lease.js';

export interface EgressAuditFields {
  /** `host=address` pairs actually connected to, comma-separated; absent when none. */
  readonly egressHost?: string;
  readonly bytesOut: number;
  readonly bytesIn: number;
  /** Each refusal's rule and host, for the record's details. */
  readonly denials: readonly { readonly rule: string; readonly host?: string }[];
}

export function egressAuditFields(source: LeaseStats): EgressAuditFields {
  const hosts = source.resolvedHosts.map((h) => `${h.host}=${h.address}`);
  return {
    ...(hosts.length > 0 ? { egressHost: hosts.join(',') } : {}),
    bytesOut: source.bytesOut,
    bytesIn: source.bytesIn,
    denials: source.denials.map((d) =>
      d.host === undefined ? { rule: d.rule } : { rule: d.rule, host: d.host },
    ),
  };
}
