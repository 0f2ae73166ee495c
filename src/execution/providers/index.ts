/**
 * @module Upstream MCP providers: `kind: Provider`, tool import with pins, rug-pull
 * quarantine, classification and per-session upstream processes in the sandbox; the same for
 * their resources, resource templates and prompts.
 * Anything exported here is public API.
 */

export type { CheckedFetchOptions, EgressMeter } from './checked-fetch.js';
export { checkedFetch, checkProviderUrl, EgressRefused } from './checked-fetch.js';
export type { EntryClassification } from './entry-classification.js';
export { checkEntryClassification, entryClassificationSchema } from './entry-classification.js';
export { importedDefinition } from './imported-definition.js';
export type {
  EntryRefreshReport,
  ProviderEntryState,
  ProviderEntryView,
} from './provider-entries.js';
export { entryDefinition, entryToolId } from './provider-entries.js';
export type {
  ProviderSummary,
  ProviderToolState,
  ProviderToolView,
  ProviderView,
  RefreshReport,
} from './provider-service.js';
export { ProviderService } from './provider-service.js';
export type {
  ProviderBind,
  ProviderSpec,
  ToolClassification,
} from './provider-spec.js';
export {
  checkClassification,
  checkProviderSpec,
  classificationSchema,
  DEFAULT_IDLE_TIMEOUT_MS,
  launchHash,
  normalizeProviderSpec,
  providerSpecSchema,
} from './provider-spec.js';
export { pinOf } from './tool-pin.js';
export type { EntryKind, ListedEntry } from './upstream-entries.js';
export { ENTRY_KINDS, entryPinKey, entryPinOf } from './upstream-entries.js';
export type {
  UpstreamCallResult,
  UpstreamLink,
  UpstreamPoolOptions,
  UpstreamRequest,
} from './upstream-pool.js';
export { openUpstream, UpstreamPool } from './upstream-pool.js';
export { workspaceOverlapProblems } from './workspace-overlap.js';
