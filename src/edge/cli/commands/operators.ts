/**
 * @module `toolgate operators`: operator accounts (create, list, show, update, disable, password)
 * and personal tokens (issue, list, revoke), and `whoami`. Run as the operator of the CLI run
 * (TOOLGATE_TOKEN / --token-file, or the bootstrap admin token); passwords are read from a file
 * or stdin, never from the command line (it shows in `ps` and shell history).
 */
import { type Command, Option } from 'commander';
import { ToolgateError } from '../../../core/index.js';
import {
  OPERATOR_ROLES,
  type OperatorRole,
  type OperatorView,
} from '../../../domain/operators/index.js';
import {
  cliAsking,
  int,
  type PageFlags,
  pageOptions,
  readInput,
  splitList,
  withAdmin,
} from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

function roles(value: string): OperatorRole[] {
  const list = splitList(value);
  for (const r of list) {
    if (!OPERATOR_ROLES.includes(r as OperatorRole)) {
      throw new TypeError(`unknown role ${r}; roles are ${OPERATOR_ROLES.join(', ')}`);
    }
  }
  return list as OperatorRole[];
}

/** The first line of a file (or stdin with `-`): the password, without its newline. */
function readPassword(file: string): string {
  return readInput(file, '--password-file').split(/\r?\n/)[0] ?? '';
}

function describe(o: OperatorView): string {
  return [
    `${o.id}  ${o.name}${o.disabled ? '  (DISABLED)' : ''}`,
    `  kind:    ${o.kind}${o.kind === 'local' ? (o.has_password ? ', password set' : ', no password') : ''}`,
    `  roles:   ${o.roles.join(', ')}`,
    `  teams:   ${o.teams.join(', ') || '-'}`,
    `  created: ${o.created_at} by ${o.created_by}`,
    `  set up by: ${o.set_up_by ?? '-'}`,
    `  confirmed: ${o.confirmed ? `yes, by ${o.confirmed_by} at ${o.confirmed_at}` : 'no (counts in no two-person decision)'}`,
  ].join('\n');
}

export function registerOperators(program: Command): void {
  const operators = program
    .command('operators')
    .description('operator accounts (people with roles) and their personal tokens');

  operators
    .command('whoami')
    .description('the operator this CLI run acts as')
    .action(() =>
      withAdmin(
        program,
        async (_admin, out, operator) => {
          out.result(
            {
              id: operator.id,
              name: operator.name,
              roles: operator.roles,
              teams: operator.teams,
              authenticated_by: operator.authenticatedBy,
            },
            () => `${operator.id} (${operator.roles.join(', ')}) via ${operator.authenticatedBy}`,
          );
        },
        { action: 'operators.self' },
      )(),
    );

  operators
    .command('create <id>')
    .description('create a local operator account (admins; the bootstrap token creates the first)')
    .requiredOption('--roles <roles>', `comma-separated: ${OPERATOR_ROLES.join(', ')}`, roles)
    .option('--teams <teams>', 'comma-separated teams whose tools an owner manages')
    .option('--name <name>', 'display name')
    .option('--password-file <file>', 'file holding the password (- for stdin)')
    .action(
      (
        id: string,
        opts: { roles: OperatorRole[]; teams?: string; name?: string; passwordFile?: string },
      ) =>
        withAdmin(program, async (admin, out, operator) => {
          const created = await admin.operators.create(
            operator,
            {
              id,
              roles: opts.roles,
              teams: splitList(opts.teams),
              ...(opts.name !== undefined ? { name: opts.name } : {}),
              ...(opts.passwordFile ? { password: readPassword(opts.passwordFile) } : {}),
            },
            'cli',
          );
          out.result(created, () => `operator created\n${describe(created)}`);
        })(),
    );

  pageOptions(operators.command('list').description('operator accounts, by id')).action(
    (opts: PageFlags) =>
      withAdmin(
        program,
        async (admin, out) => {
          const page = await admin.operators.page(opts);
          out.result({ operators: page.items, next_cursor: page.next_cursor }, () =>
            withNextCursor(
              page.items.length === 0
                ? 'no operators'
                : table([
                    ['ID', 'KIND', 'ROLES', 'TEAMS', 'DISABLED', 'CONFIRMED BY'],
                    ...page.items.map((o) => [
                      o.id,
                      o.kind,
                      o.roles.join(','),
                      o.teams.join(',') || '-',
                      String(o.disabled),
                      o.confirmed_by ?? '-',
                    ]),
                  ]),
              page.next_cursor,
            ),
          );
        },
        { action: 'state.read' },
      )(),
  );

  operators
    .command('show <id>')
    .description('one operator account')
    .action((id: string) =>
      withAdmin(
        program,
        async (admin, out) => {
          const o = await admin.operators.get(id);
          out.result(o, () => describe(o));
        },
        { action: 'state.read' },
      )(),
    );

  operators
    .command('update <id>')
    .description("change an account's roles, teams or name, or enable it again")
    .option('--roles <roles>', 'comma-separated roles (replaces them)', roles)
    .option('--teams <teams>', 'comma-separated teams (replaces them; "" for none)')
    .option('--name <name>', 'display name')
    .option('--enable', 'enable a disabled account')
    .action(
      (
        id: string,
        opts: { roles?: OperatorRole[]; teams?: string; name?: string; enable?: boolean },
      ) =>
        withAdmin(program, async (admin, out, operator) => {
          const o = await admin.operators.update(
            operator,
            id,
            {
              ...(opts.roles !== undefined ? { roles: opts.roles } : {}),
              ...(opts.teams !== undefined ? { teams: splitList(opts.teams) } : {}),
              ...(opts.name !== undefined ? { name: opts.name } : {}),
              ...(opts.enable ? { disabled: false } : {}),
            },
            'cli',
          );
          out.result(o, () => describe(o));
        })(),
    );

  operators
    .command('confirm <id>')
    .description(
      'confirm that an account is a person of its own, so it counts in two-person decisions (you must be a confirmed approver or admin, and not who set it up)',
    )
    .requiredOption('--totp <code>', 'your current second-factor code')
    .action((id: string, opts: { totp: string }) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const o = await admin.operators.confirm(operator, id, opts.totp, 'cli');
          out.result(o, () => `operator ${id} confirmed by ${o.confirmed_by}\n${describe(o)}`);
        },
        { action: 'operators.confirm' },
      )(),
    );

  operators
    .command('disable <id>')
    .description('disable an account: its logins and tokens are refused from now on')
    .action((id: string) =>
      withAdmin(program, async (admin, out, operator) => {
        const o = await admin.operators.update(operator, id, { disabled: true }, 'cli');
        out.result(o, () => `operator ${id} disabled`);
      })(),
    );

  operators
    .command('set-password <id>')
    .description("set a local account's password (read from a file or stdin)")
    .requiredOption('--password-file <file>', 'file holding the password (- for stdin)')
    .action((id: string, opts: { passwordFile: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        await admin.operators.setPassword(operator, id, readPassword(opts.passwordFile), 'cli');
        out.result({ operator: id, password: 'set' }, () => `password of ${id} set`);
      })(),
    );

  const token = operators.command('token').description('personal tokens (tgo_…)');

  token
    .command('issue')
    .description(
      'issue a personal token, printed once: for another operator (admins, --for), or for yourself with your password and a current TOTP code',
    )
    .requiredOption('--name <name>', 'what the token is for (e.g. "laptop CLI")')
    .addOption(
      new Option('--days <n>', 'days until it expires (1–366)')
        .makeOptionMandatory()
        .argParser(int(1, 366)),
    )
    .option('--roles <roles>', "a subset of the account's roles (default all)", roles)
    .option('--for <id>', 'the operator the token is for (admins)')
    .option('--password-file <file>', 'your password, for a token of your own (- for stdin)')
    .option('--totp <code>', 'your current second-factor code, for a token of your own')
    .action(
      (opts: {
        name: string;
        days: number;
        roles?: OperatorRole[];
        for?: string;
        passwordFile?: string;
        totp?: string;
      }) =>
        withAdmin(
          program,
          async (admin, out, operator) => {
            // A token of one's own needs an interactive proof: password and second factor.
            const by =
              opts.for === undefined && opts.passwordFile !== undefined
                ? await admin.operators.loginLocal(
                    operator.id,
                    readPassword(opts.passwordFile),
                    opts.totp ?? '',
                    'cli',
                  )
                : operator;
            const issued = await admin.operators.issueToken(
              by,
              {
                name: opts.name,
                expiresInDays: opts.days,
                ...(opts.roles !== undefined ? { roles: opts.roles } : {}),
                ...(opts.for !== undefined ? { operatorId: opts.for } : {}),
              },
              'cli',
            );
            out.result(issued, () =>
              [
                `token ${issued.id} for ${issued.operator_id} (${issued.roles.join(', ')}), expires ${issued.expires_at}:`,
                issued.token,
                '(printed this once only; use it as TOOLGATE_TOKEN or Authorization: Bearer)',
              ].join('\n'),
            );
          },
          { action: 'operators.self' },
        )(),
    );

  token
    .command('list')
    .description('personal tokens of yourself, or of another operator (admins, --for)')
    .option('--for <id>', 'whose tokens (admins)')
    .action((opts: { for?: string }) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const whose = opts.for ?? operator.id;
          // Another operator's tokens are an admin's to list: refused and audited like any command.
          if (whose !== operator.id) {
            await admin.operators.authority.enforce(operator, 'administer', cliAsking(program));
          }
          if (whose !== operator.id) await admin.operators.get(whose);
          const list = await admin.operators.tokens(whose);
          out.result({ tokens: list }, () =>
            list.length === 0
              ? 'no tokens'
              : table([
                  ['ID', 'NAME', 'ROLES', 'EXPIRES', 'REVOKED'],
                  ...list.map((t) => [
                    t.id,
                    t.name,
                    t.roles.join(','),
                    t.expires_at,
                    t.revoked_at ?? '-',
                  ]),
                ]),
          );
        },
        { action: 'operators.self' },
      )(),
    );

  token
    .command('revoke <tokenId>')
    .description('revoke a token: your own, or anyone’s for an admin')
    .action((tokenId: string) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const t = await admin.operators.revokeToken(operator, tokenId, 'cli');
          out.result(t, () => `token ${t.id} of ${t.operator_id} revoked`);
        },
        { action: 'operators.self' },
      )(),
    );
}
