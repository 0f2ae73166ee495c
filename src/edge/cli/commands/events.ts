/**
 * @module `toolgate events`: the administrative event record.
 */
import { type Command, Option } from 'commander';
import { decodeCursor, pageFromRows } from '../../../core/index.js';
import { int, withAdmin } from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

export function registerEvents(program: Command): void {
  program
    .command('events')
    .description('the administrative event record')
    .command('list')
    .option('--subject <subject>', 'e.g. tool:send_email@1.0.0')
    .addOption(
      new Option('--after <seq>', 'only events after this sequence number').argParser(
        int(0, Number.MAX_SAFE_INTEGER),
      ),
    )
    .option('--cursor <cursor>', 'the cursor the previous page printed')
    .addOption(new Option('--limit <n>', 'most events').default(100).argParser(int(1, 10_000)))
    .action((opts: { subject?: string; after?: number; cursor?: string; limit: number }) =>
      withAdmin(
        program,
        async (admin, out) => {
          const after =
            opts.cursor !== undefined ? Number(decodeCursor('events', opts.cursor)[0]) : opts.after;
          const rows = await admin.events.list({
            limit: opts.limit + 1,
            ...(opts.subject ? { subject: opts.subject } : {}),
            ...(after !== undefined ? { afterSeq: after } : {}),
          });
          const page = pageFromRows('events', rows, (r) => [Number(r.seq)], opts.limit);
          const events = page.items;
          out.result(
            {
              events: events.map((e) => ({ ...e, details: JSON.parse(e.details) as unknown })),
              next_cursor: page.next_cursor,
            },
            () =>
              withNextCursor(
                table(events.map((e) => [String(e.seq), e.at, e.actor, e.action, e.subject])),
                page.next_cursor,
              ),
          );
        },
        { action: 'state.read' },
      )(),
    );
}
