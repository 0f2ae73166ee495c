/**
 * @module A paged list subcommand (`approvals list`, `changes list`, `runs list`): the page
 * options, an optional `--status` filter, the operator authority's check, and the same output in both forms — the
 * JSON page under its key, or a table with the next cursor.
 */
import { type Command, Option } from 'commander';
import type { AdminApi, OperatorAction } from '../../api/index.js';
import type { Page } from '../../core/index.js';
import { type PageFlags, pageOptions, withAdmin } from './command-kit.js';
import { table, withNextCursor } from './output.js';

export interface ListSpec<T, F> {
  /** The JSON key of the items (`approvals`, `changes`, `runs`). */
  readonly key: string;
  /** The text when there are none. */
  readonly empty: string;
  readonly header: readonly string[];
  row(item: T): string[];
  /** Who may list: an action of the operator authority's table. */
  readonly action: OperatorAction;
  /** `--status` choices, when the list has statuses. */
  readonly statuses?: readonly string[];
  /** Further options of this list (e.g. `--agent`). */
  options?(command: Command): Command;
  page(admin: AdminApi, opts: F & { status?: string } & PageFlags): Promise<Page<T>>;
}

export function registerList<T, F>(program: Command, parent: Command, spec: ListSpec<T, F>): void {
  let command = parent.command('list');
  if (spec.statuses)
    command = command.addOption(new Option('--status <status>').choices(spec.statuses));
  if (spec.options) command = spec.options(command);
  pageOptions(command).action((opts: F & { status?: string } & PageFlags) =>
    withAdmin(
      program,
      async (admin, out) => {
        const page = await spec.page(admin, opts);
        const list = page.items;
        out.result({ [spec.key]: list, next_cursor: page.next_cursor }, () =>
          withNextCursor(
            list.length === 0 ? spec.empty : table([[...spec.header], ...list.map(spec.row)]),
            page.next_cursor,
          ),
        );
      },
      { action: spec.action },
    )(),
  );
}
