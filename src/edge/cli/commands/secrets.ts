/**
 * @module `toolgate secrets`: tools' credentials, encrypted at rest; values are read, never printed.
 */
import type { Command } from 'commander';
import { MAX_SECRET_FILE_BYTES, pageOf, readBoundedFile } from '../../../core/index.js';
import type { SecretInfo } from '../../../domain/credentials/index.js';
import { operatorActor } from '../../../domain/operators/index.js';
import { type PageFlags, pageOptions, withAdmin } from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

/** The value from --from-file or stdin, with one trailing newline (from `echo`, editors) removed. */
function readSecretValue(fromFile: string | undefined): string {
  if (fromFile === undefined && process.stdin.isTTY) {
    process.stderr.write('secret value (end with Ctrl-D): ');
  }
  const text =
    fromFile === undefined
      ? readBoundedFile('-', { option: 'stdin', maxBytes: MAX_SECRET_FILE_BYTES, stdin: true })
      : readBoundedFile(fromFile, { option: '--from-file', maxBytes: MAX_SECRET_FILE_BYTES });
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
}

function secretLine(s: SecretInfo): string {
  return `${s.tool_id}/${s.name} (${s.environment}) version ${s.version}, master key ${s.key_id}`;
}

interface SecretOptions {
  tool: string;
  env: string;
  fromFile?: string;
}

const secretTarget = (command: Command): Command =>
  command
    .requiredOption('--tool <id>', 'the tool this secret belongs to (only that tool can use it)')
    .option('--env <environment>', 'environment', 'default');

export function registerSecrets(program: Command): void {
  // Secrets: values come from stdin or a file, never from argv (shell history, `ps`), and are
  // never printed; every command reports the version and key id instead.
  const secrets = program
    .command('secrets')
    .description('tool credentials, encrypted at rest (values are read from stdin, never printed)');

  secretTarget(
    secrets
      .command('set <name>')
      .description('create a secret for a tool; the value is read from stdin or --from-file'),
  )
    .option('--from-file <path>', 'read the value from this file instead of stdin')
    .action((name: string, opts: SecretOptions) =>
      withAdmin(program, async (admin, out, operator) => {
        const value = readSecretValue(opts.fromFile);
        const info = await admin.secrets.set(
          { toolId: opts.tool, name, environment: opts.env },
          value,
          operatorActor(operator, 'cli'),
        );
        out.result({ secret: info }, () => `set ${secretLine(info)}`);
      })(),
    );

  secretTarget(
    secrets
      .command('rotate <name>')
      .description(
        'replace a secret with a new value (the next version); the old one is no longer used',
      ),
  )
    .option('--from-file <path>', 'read the new value from this file instead of stdin')
    .action((name: string, opts: SecretOptions) =>
      withAdmin(program, async (admin, out, operator) => {
        const value = readSecretValue(opts.fromFile);
        const info = await admin.secrets.rotate(
          { toolId: opts.tool, name, environment: opts.env },
          value,
          operatorActor(operator, 'cli'),
        );
        out.result({ secret: info }, () => `rotated ${secretLine(info)}`);
      })(),
    );

  secretTarget(secrets.command('delete <name>').description('delete a secret')).action(
    (name: string, opts: SecretOptions) =>
      withAdmin(program, async (admin, out, operator) => {
        const info = await admin.secrets.delete(
          { toolId: opts.tool, name, environment: opts.env },
          operatorActor(operator, 'cli'),
        );
        out.result({ deleted: info }, () => `deleted ${secretLine(info)}`);
      })(),
  );

  pageOptions(
    secrets
      .command('list')
      .description('list secrets: tool, name, environment, version, dates, key id (never values)')
      .option('--tool <id>', 'only this tool')
      .option('--env <environment>', 'only this environment'),
  ).action((opts: { tool?: string; env?: string } & PageFlags) =>
    withAdmin(
      program,
      async (admin, out) => {
        const all = await admin.secrets.list({
          ...(opts.tool ? { toolId: opts.tool } : {}),
          ...(opts.env ? { environment: opts.env } : {}),
        });
        const page = pageOf('secrets', all, (x) => [x.tool_id, x.name, x.environment], 'asc', opts);
        const list = page.items;
        out.result({ secrets: list, next_cursor: page.next_cursor }, () =>
          withNextCursor(
            list.length === 0
              ? 'no secrets'
              : table([
                  ['TOOL', 'NAME', 'ENV', 'VERSION', 'CREATED', 'ROTATED', 'KEY ID'],
                  ...list.map((s) => [
                    s.tool_id,
                    s.name,
                    s.environment,
                    String(s.version),
                    s.created_at,
                    s.rotated_at ?? '-',
                    s.key_id,
                  ]),
                ]),
            page.next_cursor,
          ),
        );
      },
      { action: 'state.read' },
    )(),
  );
}
