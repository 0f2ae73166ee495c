/**
 * @module `toolgate approvers`: operators' second factors: enroll, remove, status, unlock.
 * Enrolment is an admin's act for a named operator, through the admin API like any other; the
 * secret is sealed in the database (every replica sees it at once) and printed here once.
 */
import type { Command } from 'commander';
import { operatorActor } from '../../../domain/operators/index.js';
import { withAdmin } from '../command-kit.js';

export function registerApprovers(program: Command): void {
  const approvers = program
    .command('approvers')
    .description("operators' second factors (TOTP, passkeys), which approvals and changes need");

  approvers
    .command('enroll <operator-id>')
    .description(
      "create or replace an operator's second factor (admins only); prints the secret and an otpauth URI once",
    )
    .option('--totp <code>', 'a current code of your own factor, to replace your own')
    .action((id: string, opts: { totp?: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const e = await admin.secondFactor.enroll(operator, id, 'cli', { totp: opts.totp });
        out.result(e, () =>
          [
            `operator ${id}: second factor ${e.version > 1 ? 're-enrolled (the old one no longer works)' : 'enrolled'}; add this to an authenticator app (shown once):`,
            e.otpauth_uri,
            `secret: ${e.secret}`,
          ].join('\n'),
        );
      })(),
    );

  approvers
    .command('remove <operator-id>')
    .description("remove an operator's second factor (admins only, audited)")
    .option('--totp <code>', 'a current code of your own factor, to remove your own')
    .action((id: string, opts: { totp?: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const r = await admin.secondFactor.remove(operator, id, 'cli', { totp: opts.totp });
        out.result(r, () =>
          r.removed ? `operator ${id}: second factor removed` : `operator ${id}: none enrolled`,
        );
      })(),
    );

  approvers
    .command('passkeys <operator-id>')
    .description(
      "an operator's passkeys (WebAuthn: name, credential id, enrolled, last used); each is enrolled by its operator in the console",
    )
    .action((id: string) =>
      withAdmin(program, async (admin, out) => {
        const list = await admin.passkeys.list(id);
        out.result(list, () =>
          list.length === 0
            ? `${id}: no passkey`
            : list
                .map(
                  (p) =>
                    `${p.credential_id}  ${p.name}  enrolled ${p.created_at}  last used ${p.last_used_at ?? 'never'}`,
                )
                .join('\n'),
        );
      })(),
    );

  approvers
    .command('remove-passkey <operator-id> <credential-id>')
    .description("remove one of an operator's passkeys (one's own, or any as an admin; audited)")
    .allowUnknownOption() // a base64url credential id may begin with '-': an operand, not an option
    .action((id: string, credential: string) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const r = await admin.passkeys.remove(operator, id, credential, 'cli');
          out.result(r, () => `operator ${id}: passkey ${credential} removed`);
        },
        { action: 'operators.self' },
      )(),
    );

  approvers
    .command('status <operator-id>')
    .description("an operator's second-factor state: consecutive failures, backoff, lockout")
    .action((id: string) =>
      withAdmin(program, async (admin, out) => {
        const s = await admin.secondFactor.state(id);
        out.result(s, () =>
          s.locked_until
            ? `${id}: locked until ${s.locked_until} after ${s.failures} failed codes`
            : `${id}: ${s.failures} failed codes${s.next_attempt_at ? `, next attempt at ${s.next_attempt_at}` : ''}`,
        );
      })(),
    );

  approvers
    .command('unlock <operator-id>')
    .description(
      "clear another operator's failed second-factor codes and lockout (audited; never your own, nor a decider's without a token once the first admin is set up); the way out of a lockout",
    )
    .action((id: string) =>
      withAdmin(program, async (admin, out, operator) => {
        const s = await admin.secondFactor.unlock(id, operatorActor(operator, 'cli'));
        out.result(s, () => `${id}: unlocked`);
      })(),
    );
}
