/** @module A governance report (C16): one titled table, the same for JSON, CSV and Markdown. */

export type Cell = string | number | boolean | null;
export type ReportRow = Readonly<Record<string, Cell>>;

export const REPORT_NAMES = [
  'capability-register',
  'access-matrix',
  'invocations',
  'deprecation-impact',
  'orphaned-tools',
  'portfolio-audit',
  'security-review-record',
] as const;
export type ReportName = (typeof REPORT_NAMES)[number];

export const REPORT_FORMATS = ['json', 'csv', 'md'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface Report {
  readonly report: ReportName;
  readonly title: string;
  readonly generated_at: string;
  /** The period the report covers, for reports over the audit log. */
  readonly period: { readonly from: string; readonly to: string } | null;
  readonly columns: readonly string[];
  readonly rows: readonly ReportRow[];
  /** How to read the report (rules applied, what a column means). */
  readonly notes: readonly string[];
}

export function isReportName(name: string): name is ReportName {
  return (REPORT_NAMES as readonly string[]).includes(name);
}

export function isReportFormat(format: string): format is ReportFormat {
  return (REPORT_FORMATS as readonly string[]).includes(format);
}
