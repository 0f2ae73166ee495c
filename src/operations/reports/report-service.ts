/** @module Runs a named report for a period and renders it; the one path for CLI and REST. */
import { type Clock, problem, systemClock, ToolgateError } from '../../core/index.js';
import { accessMatrix } from './access-matrix.js';
import { capabilityRegister } from './capability-register.js';
import { deprecationImpact } from './deprecation-impact.js';
import { invocations } from './invocations.js';
import { orphanedTools } from './orphaned-tools.js';
import { portfolioAudit } from './portfolio-audit.js';
import { renderReport } from './render-report.js';
import {
  isReportFormat,
  isReportName,
  REPORT_FORMATS,
  REPORT_NAMES,
  type Report,
} from './report.js';
import type { Period, ReportSources } from './report-sources.js';
import { securityReviewRecord } from './security-review-record.js';

export interface ReportRequest {
  readonly name: string;
  readonly format?: string;
  /** ISO-8601 instants; default: the 30 days up to now. */
  readonly from?: string;
  readonly to?: string;
}

const DEFAULT_DAYS = 30;
/** The portfolio audit is quarterly: its default period is the 90 days up to now. */
const DEFAULT_DAYS_OF: Partial<Record<string, number>> = { 'portfolio-audit': 90 };

function invalid(pointer: string, message: string, rule: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, {
    problems: [problem(pointer, message, rule)],
  });
}

function instant(value: string, pointer: string): Date {
  // Dates and date-times only: Date.parse alone accepts far too much.
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(value))
    throw invalid(pointer, `${pointer.slice(1)} must be an ISO-8601 date or date-time`, 'format');
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalid(pointer, `${pointer.slice(1)} is not a valid date`, 'format');
  return new Date(ms);
}

export class ReportService {
  readonly #src: ReportSources;
  readonly #clock: Clock;

  constructor(sources: ReportSources, clock: Clock = systemClock) {
    this.#src = sources;
    this.#clock = clock;
  }

  names(): readonly string[] {
    return REPORT_NAMES;
  }

  async build(request: ReportRequest): Promise<Report> {
    const { name } = request;
    if (!isReportName(name)) {
      throw new ToolgateError(
        'NOT_FOUND',
        `no report ${name}; reports: ${REPORT_NAMES.join(', ')}`,
        {},
      );
    }
    const now = this.#clock();
    const given = request.from !== undefined || request.to !== undefined;
    const to = request.to !== undefined ? instant(request.to, '/to') : now;
    const from =
      request.from !== undefined
        ? instant(request.from, '/from')
        : new Date(to.getTime() - (DEFAULT_DAYS_OF[name] ?? DEFAULT_DAYS) * 86_400_000);
    if (from.getTime() >= to.getTime()) throw invalid('/from', 'from must be before to', 'range');
    const period: Period = { from: from.toISOString(), to: to.toISOString() };
    switch (name) {
      case 'capability-register':
        return capabilityRegister(this.#src, now);
      case 'access-matrix':
        return accessMatrix(this.#src, now);
      case 'invocations':
        return invocations(this.#src, period, now);
      case 'deprecation-impact':
        return deprecationImpact(this.#src, given ? period : null, now);
      case 'orphaned-tools':
        return orphanedTools(this.#src, now);
      case 'portfolio-audit':
        return portfolioAudit(this.#src, period, now);
      case 'security-review-record':
        return securityReviewRecord(this.#src, given ? period : null, now);
    }
  }

  /** The report rendered in a format (json, csv, md). */
  async render(request: ReportRequest): Promise<{ contentType: string; body: string }> {
    const format = request.format ?? 'json';
    if (!isReportFormat(format))
      throw invalid('/format', `format must be one of ${REPORT_FORMATS.join(', ')}`, 'enum');
    return renderReport(await this.build(request), format);
  }
}
