/** @module Governance reports (C16). Anything exported here is public API. */
export { renderCsv, renderMarkdown, renderReport } from './render-report.js';
export type { Cell, Report, ReportFormat, ReportName, ReportRow } from './report.js';
export { REPORT_FORMATS, REPORT_NAMES } from './report.js';
export type { ReportRequest } from './report-service.js';
export { ReportService } from './report-service.js';
export type { Period, ReportSources } from './report-sources.js';
export { healthStates } from './report-sources.js';
