/**
 * @module The two APIs fronts are given: `AgentApi` (REST agent routes, MCP) and `AdminApi` (REST
 * admin routes, the CLI), and the admin services that need no open gateway. Anything exported
 * here is public API for the fronts (docs/architecture.md §6).
 */
export type { AdminApi } from './admin-api.js';
export type { AgentApi, SecurityEvents } from './agent-api.js';
export type { DriverReport } from './host-admin.js';
export { codeHash, hostDoctor, storeIsCorrupt, storeIsUnavailable } from './host-admin.js';
