/**
 * @module `toolgate reports`: governance reports in JSON, CSV or Markdown.
 */
import { type Command, Option } from 'commander';
import { withAdmin } from '../command-kit.js';

export function registerReports(program: Command): void {
  program
    .command('reports <name>')
    .description(
      'governance reports: capability-register, access-matrix, invocations, deprecation-impact, orphaned-tools, portfolio-audit, security-review-record',
    )
    .addOption(
      new Option('--format <format>', 'output format')
        .choices(['json', 'csv', 'md'])
        .default('json'),
    )
    .option('--from <date>', 'start of the period (ISO-8601; default 30 days before --to)')
    .option('--to <date>', 'end of the period (ISO-8601; default now)')
    .action((name: string, opts: { format: string; from?: string; to?: string }) =>
      withAdmin(
        program,
        async (admin, out) => {
          const { body } = await admin.reports.render({
            name,
            format: opts.format,
            ...(opts.from !== undefined ? { from: opts.from } : {}),
            ...(opts.to !== undefined ? { to: opts.to } : {}),
          });
          // The report itself, in the format asked for; with --json a CSV or Markdown report is
          // the string `body` of a JSON object, so that stdout is JSON whenever --json is given.
          if (out.json && opts.format !== 'json') {
            out.result({ report: name, format: opts.format, body }, () => body);
          } else {
            process.stdout.write(body);
          }
        },
        { action: 'state.read' },
      )(),
    );
}
