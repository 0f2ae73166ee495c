/** @module Configuration as code (`apply -f`). Anything exported here is public API. */
export type { ApplyChange, ApplyOptions, ApplyResult, ChangeAction } from './apply.js';
export { ApplyService } from './apply.js';
export type { ConfigDocument, ConfigKind } from './config-document.js';
export {
  CONFIG_SCHEMA_ID,
  configDocumentSchema,
  MAX_CONFIG_BYTES,
  parseConfigText,
  RESERVED_KINDS,
  SUPPORTED_KINDS,
} from './config-document.js';
