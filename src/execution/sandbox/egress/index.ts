/**
 * @module Egress (C10): the forward proxy sandboxes reach the network through and the rules it
 * applies (the http runtime, src/execution/runtimes/http, goes out under the same rules). Anything exported
 * here is public API of the sandbox folder.
 */

export type { SecretPattern } from '../../../core/index.js';
export { SECRET_PATTERNS } from '../../../core/index.js';
export type { AddressVerdict } from './address-policy.js';
export { checkAddress, METADATA_ADDRESSES } from './address-policy.js';
export type { ByteBudget } from './byte-budget.js';
export { createByteBudget } from './byte-budget.js';
export type { DialerOptions } from './checked-dialer.js';
export { CheckedDialer, isLoopbackAddress } from './checked-dialer.js';
export type { CheckedRequestOptions } from './checked-request.js';
export { requestBody, requestOver } from './checked-request.js';
export type { EgressAuditFields } from './egress-audit.js';
export { egressAuditFields } from './egress-audit.js';
export type { EgressAllow, EgressDecision, EgressDeny, EgressDenyCode } from './egress-decision.js';
export { checkAllowed, checkHostName, parseAuthority } from './egress-host.js';
export type { EgressLease, LeaseOptions, LeaseStats } from './egress-lease.js';
export type { EgressProxyOptions } from './egress-proxy.js';
export { EgressProxy } from './egress-proxy.js';
export type { OutboundOptions } from './outbound.js';
export { OutboundGuard, OutboundRefused } from './outbound.js';
export type { ConfiguredUrl } from './outbound-problems.js';
export { refuseOutboundProblems } from './outbound-problems.js';
export type { ResolvedAddress, Resolver } from './resolver.js';
export { systemResolver, withDeadline } from './resolver.js';
export type { LeaseCredential } from './secret-scan.js';
export { scanOutbound } from './secret-scan.js';
