/**
 * @module Organisation policies in Cedar. Anything exported here is public API; the request
 * translation and the tool-scope analysis are internals of this folder.
 */
export type {
  CedarAgent,
  CedarContext,
  CedarDecision,
  CedarLoadProblem,
  CedarLoadResult,
  CedarRequest,
  CedarTool,
  CedarUser,
  PolicySource,
  ToolFacts,
} from './cedar-engine.js';
export { CedarPolicyEngine } from './cedar-engine.js';
export { CEDAR_TYPES, TOOLGATE_CEDAR_SCHEMA } from './cedar-schema.js';
