/**
 * @module `toolgate approvers`: approvers' second factor: enroll, status, unlock.
 */

import type { Command } from 'commander';
import { operatorActor } from '../../operators/index.js';
import { type GlobalOptions, withAdmin } from '../command-kit.js';
import { makeOutput, reportError } from '../output.js';
import { enrollApprover } from '../runtime-files.js';

export function registerApprovers(program: Command): void {
  const approvers = program.command('approvers').description('people who approve calls');

  approvers
    .command('enroll <id>')
    .description(
      "create an approver's second factor (TOTP); prints the secret and an otpauth URI once",
    )
    .action((id: string) => {
      const globals = program.opts<GlobalOptions>();
      const out = makeOutput(globals.json === true);
      try {
        const { secret, uri } = enrollApprover(globals.dataDir, id);
        out.result({ approver: id, secret, otpauth_uri: uri }, () =>
          [
            `approver ${id} enrolled; add this to an authenticator app (shown once):`,
            uri,
            `secret: ${secret}`,
          ].join('\n'),
        );
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
    });

  approvers
    .command('status <id>')
    .description("an approver's second-factor state: consecutive failures, backoff, lockout")
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
    .command('unlock <id>')
    .description(
      "clear an approver's failed second-factor codes and lockout (audited); the way out of a lockout",
    )
    .action((id: string) =>
      withAdmin(program, async (admin, out, operator) => {
        const s = await admin.secondFactor.unlock(id, operatorActor(operator, 'cli'));
        out.result(s, () => `${id}: unlocked`);
      })(),
    );
}
