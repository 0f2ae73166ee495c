/**
 * @module The composition root: `openGateway` opens the store and calls each wing's wiring in
 * order (one short file per wing under src/host/), deciding nothing itself. `openToolgate` hands a
 * front only its API (`agent`, `admin`, `security`); `openGateway` returns the whole wiring, for
 * this repository's tests and benchmarks, and is not exported from the package
 * (docs/architecture.md §2, §6).
 */
import { securityEvents } from '../api/index.js';
import { closeInOrder } from '../core/index.js';
import type { HealthReader } from '../domain/catalog/index.js';
import { lazyMasterKey } from '../domain/credentials/index.js';
import {
  type OidcConfig,
  OidcLogin,
  type OidcLoginOptions,
} from '../domain/operators/oidc/index.js';
import type { DirectoryReader } from '../domain/policy/index.js';
import {
  OutboundGuard,
  type OutboundOptions,
  refuseOutboundProblems,
} from '../execution/sandbox/index.js';
import { DEFAULT_DB_URL, openStore, readRevisions } from '../records/store/index.js';
import { type Gateway, gatewayOf, type Toolgate } from './gateway.js';
import { systemClockOf, type ToolgateOptions } from './toolgate-options.js';
import { wireAgentAuth } from './wire-agent-auth.js';
import { adminApi, agentApi } from './wire-api.js';
import { checkConfiguration } from './wire-config.js';
import { wireCredentials } from './wire-credentials.js';
import { wireDomain } from './wire-domain.js';
import { wireRuntimes, wireSandbox } from './wire-execution.js';
import { wireGate } from './wire-gate.js';
import { wireHealth, wireObservers, wireOperations } from './wire-operations.js';
import { wireRecords } from './wire-records.js';
import { wireSessions } from './wire-sessions.js';

export type { Gateway, Toolgate } from './gateway.js';
export type { ToolgateOptions } from './toolgate-options.js';

/**
 * The OpenID Connect relying party under the outbound rules (`outbound` as for `openToolgate`):
 * its issuer is checked now, resolved (INPUT_INVALID at `/issuer` with the egress rule), and every
 * request to the provider — discovery, token, JWKS, the endpoints discovery names — again when made.
 */
export async function openOidcLogin(
  config: OidcConfig,
  outbound: OutboundOptions = {},
  options: Omit<OidcLoginOptions, 'outbound'> = {},
): Promise<OidcLogin> {
  const guard = new OutboundGuard(outbound);
  await refuseOutboundProblems(guard, [{ at: '/issuer', url: config.issuer }]);
  return new OidcLogin(config, { ...options, outbound: guard });
}

/** Opens a gateway and hands back only what fronts may use. */
export async function openToolgate(options: ToolgateOptions = {}): Promise<Toolgate> {
  const { agent, admin, security, close } = await openGateway(options);
  return { agent, admin, security, close };
}

/** Opens a gateway with its whole wiring (tests, benchmarks); fronts use `openToolgate`. */
export async function openGateway(options: ToolgateOptions = {}): Promise<Gateway> {
  // Configuration is checked before anything is opened: a bad one leaves nothing behind.
  const config = await checkConfiguration(options);
  // Ports bound to services made further down, read only once the gateway is open: the approvals
  // metrics scrape, health for sessions and discovery (the monitor probes through runtimes that
  // need the sessions), directory destination sets through the gate. Each is a port the lower wing
  // owns (`HealthReader`, `DirectoryReader`), so no service is completed by a setter.
  const approvalsLater = () => domain.approvals;
  const healthLater: HealthReader = { healthOf: (id, version) => health.healthOf(id, version) };
  const directoryLater: DirectoryReader = (source) => gate.directoryReader()(source);
  const observers = wireObservers(config, approvalsLater);
  const store = await openStore(options.db ?? DEFAULT_DB_URL);
  const host = wireSandbox(options, store);
  // One master key, loaded once on first use, seals tool secrets, second factors and channel URLs.
  const loadMasterKey = lazyMasterKey(options.masterKey);
  const domain = wireDomain(options, store, {
    config,
    observers,
    host,
    loadMasterKey,
    directory: directoryLater,
  });
  const credentials = wireCredentials(options, store, config, loadMasterKey);
  const records = wireRecords(options, store, { ...domain, ...observers }, loadMasterKey);
  const security = securityEvents(store, records.pseudonyms, systemClockOf(options));
  const sessions = wireSessions(options, store, domain, config, healthLater);
  const execution = wireRuntimes(options, store, { domain, host, sessions });
  const health = wireHealth(options, store, {
    domain,
    host,
    execution,
    credentials,
    observers,
    config,
  });
  const gate = wireGate(options, store, {
    domain,
    sessions,
    execution,
    credentials,
    health,
    records,
    config,
    security,
  });
  const operations = await wireOperations(options, store, {
    domain,
    sessions,
    execution,
    records,
    health,
    observers,
    config,
    loadMasterKey,
  });
  const auth = wireAgentAuth(options, {
    config,
    domain,
    credentials,
    security,
    gate,
    loadMasterKey,
  });
  const wings = {
    store,
    host,
    domain,
    credentials,
    records,
    sessions,
    execution,
    health,
    gate,
    operations,
    observers,
    security,
    auth,
  };
  const revisions = () => readRevisions(store.db);
  const agent = agentApi({ auth, sessions, gate, revisions, fleet: store.fleet });
  const admin = adminApi(options, store, wings);
  const close = closeInOrder([
    // Calls still running are recorded as interrupted, and nothing starts from now on.
    () => gate.interrupt(),
    () => health.stop(),
    () => execution.upstreams.close(),
    () => gate.flush(),
    // Alerts raised by what was just flushed are written before the log closes; then stopped.
    () => operations.detectors?.idle().then(() => operations.detectors?.stop()),
    () => gate.flush(),
    () => observers.notifier.close(),
    () => operations.ownerNotices.close().then(() => operations.decisionNotices.close()),
    () => security.close(),
    () => records.audit.close().then(() => records.stopSequencer()),
    ...(options.egress ? [] : [() => host.egress.proxy.close()]), // a caller's own proxy: theirs
    () => store.close(),
    () => config.tracing.close(), // last: every call's spans have ended; a hung collector is bounded
  ]);
  return gatewayOf(wings, { agent, admin, close }, revisions);
}
