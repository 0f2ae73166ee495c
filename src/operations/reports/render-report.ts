/**
 * @module Renders a report as JSON, CSV (RFC 4180, CRLF, quoted where needed; text cells that
 * start with = + - @ tab or CR get a leading ' so a spreadsheet never runs them as a formula) or
 * Markdown (pipes and backslashes escaped, line breaks flattened, so a cell never breaks the table).
 */
import type { Cell, Report, ReportFormat } from './report.js';

const FORMULA_START = /^[=+\-@\t\r]/;

function csvCell(cell: Cell): string {
  if (cell === null) return '';
  // Numbers and booleans are ours, never a caller's text: a negative number stays a number.
  let text = typeof cell === 'string' ? cell : String(cell);
  if (typeof cell === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replaceAll('"', '""')}"` : text;
}

export function renderCsv(report: Report): string {
  const lines = [report.columns.map(csvCell).join(',')];
  for (const row of report.rows)
    lines.push(report.columns.map((c) => csvCell(row[c] ?? null)).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function mdCell(cell: Cell): string {
  if (cell === null) return '';
  return String(cell)
    .replaceAll('\\', '\\\\')
    .replaceAll('|', '\\|')
    .replace(/\r\n|\r|\n/g, ' ');
}

export function renderMarkdown(report: Report): string {
  const out = [`# ${mdCell(report.title)}`, ''];
  out.push(`Generated ${report.generated_at}.`);
  if (report.period) out.push(`Period: ${report.period.from} to ${report.period.to}.`);
  out.push('');
  if (report.rows.length === 0) out.push('_No rows._');
  else {
    out.push(`| ${report.columns.map(mdCell).join(' | ')} |`);
    out.push(`| ${report.columns.map(() => '---').join(' | ')} |`);
    for (const row of report.rows)
      out.push(`| ${report.columns.map((c) => mdCell(row[c] ?? null)).join(' | ')} |`);
  }
  if (report.notes.length > 0) {
    out.push('');
    for (const n of report.notes) out.push(`- ${mdCell(n)}`);
  }
  return `${out.join('\n')}\n`;
}

export function renderReport(
  report: Report,
  format: ReportFormat,
): { contentType: string; body: string } {
  switch (format) {
    case 'json':
      return { contentType: 'application/json', body: `${JSON.stringify(report, null, 2)}\n` };
    case 'csv':
      return { contentType: 'text/csv; charset=utf-8; header=present', body: renderCsv(report) };
    case 'md':
      return { contentType: 'text/markdown; charset=utf-8', body: renderMarkdown(report) };
  }
}
