/**
 * @module Detectors (C13) over the committed audit record stream. Anything exported
 * here is public API.
 */
export type { Alert, Detector, DetectorName, Observed, ToolFacts } from './detector.js';
export type { DetectorsConfig, DetectorsConfigInput } from './detector-config.js';
export {
  DEFAULT_DETECTORS_CONFIG,
  detectorsConfigSchema,
  resolveDetectorsConfig,
  webhookUrlProblem,
} from './detector-config.js';
export type { DetectorEngineDependencies, DetectorSink } from './detector-engine.js';
export { buildDetectors, DetectorEngine } from './detector-engine.js';
export type { WebhookOutcome } from './webhook.js';
