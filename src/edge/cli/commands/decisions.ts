/**
 * @module `toolgate decisions`: decisions signed with a passkey, checked offline
 * (docs/architecture.md §6, "Passkeys bound to the decision"). `verify` rebuilds each decision's
 * commitment from the store (the live database, or a restored backup through `--db`) or from an
 * evidence file `export` wrote, and checks that the stored credential's public key signed exactly
 * that decision: the challenge, origin, RP ID hash, user verification and signature, and the
 * audit record naming the assertion. Read only; a failed check exits 6.
 */
import type { Command } from 'commander';
import {
  type DecisionEvidence,
  type DecisionProofReport,
  proveDecisions,
} from '../../../api/index.js';
import { type GlobalOptions, readInput, withAdmin } from '../command-kit.js';
import { exitCodeOf } from '../exit-codes.js';
import { makeOutput, type Output, reportError } from '../output.js';

/** Evidence files hold every assertion of a store: a generous bound, still a bound. */
const MAX_EVIDENCE_BYTES = 64 * 1024 * 1024;

interface VerifyOptions {
  readonly subject?: string;
  readonly file?: string;
  readonly rpId?: string;
  readonly origin?: string;
}

function printProofs(out: Output, report: DecisionProofReport, where: string): void {
  out.result(report, () => {
    const lines = report.proofs.map(
      (p) =>
        `${p.ok ? 'ok' : 'FAILED'}: ${p.kind} ${p.subject} by ${p.approver} (passkey ${p.credential.slice(0, 16)}…, ${p.at})${p.ok ? '' : `: ${p.problems.join('; ')}`}`,
    );
    const head = report.ok
      ? `ok: ${where}: ${report.checked} passkey-signed decisions verify`
      : `FAILED: ${where}: ${report.failed} of ${report.checked} passkey-signed decisions do not verify`;
    return [head, ...lines].join('\n');
  });
  // Not a refusal: the check ran and found a decision its signature does not cover.
  if (!report.ok) process.exitCode = exitCodeOf('verification_failed');
}

function relyingParty(opts: VerifyOptions): { rpId?: string; origin?: string } {
  return {
    ...(opts.rpId !== undefined ? { rpId: opts.rpId } : {}),
    ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
  };
}

export function registerDecisions(program: Command): void {
  const decisions = program
    .command('decisions')
    .description('decisions signed with a passkey: verify offline, export the evidence');

  decisions
    .command('verify')
    .description(
      "check that each passkey-signed decision's credential signed exactly that decision (store, restored backup, or --file)",
    )
    .option('--subject <id>', 'only this approval or change id (a review: tool@version)')
    .option(
      '--file <evidence.json>',
      'check an evidence file `decisions export` wrote (no database)',
    )
    .option('--rp-id <id>', 'the relying party ID the passkeys must be for (default: as stored)')
    .option('--origin <url>', 'the origin the browser must have signed at (default: as stored)')
    .action(async (opts: VerifyOptions) => {
      const globals = program.opts<GlobalOptions>();
      const out = makeOutput(globals.json === true);
      if (opts.file !== undefined) {
        try {
          const parsed = JSON.parse(readInput(opts.file, '--file', MAX_EVIDENCE_BYTES)) as {
            evidence?: DecisionEvidence[];
          };
          const evidence = (parsed.evidence ?? []).filter(
            (e) => opts.subject === undefined || e.assertion.subject_id === opts.subject,
          );
          printProofs(out, await proveDecisions(evidence, relyingParty(opts)), opts.file);
        } catch (err) {
          process.exitCode = reportError(err, out.json);
        }
        return;
      }
      await withAdmin(
        program,
        async (admin) => {
          const report = await admin.decisions.verify({
            ...(opts.subject !== undefined ? { subject: opts.subject } : {}),
            ...relyingParty(opts),
          });
          printProofs(out, report, admin.health.location);
        },
        { action: 'state.read', audit: { checkpoints: false } },
      )();
    });

  decisions
    .command('export')
    .description(
      'write the evidence of every passkey-signed decision as JSON (for `verify --file`)',
    )
    .option('--subject <id>', 'only this approval or change id')
    .action((opts: { subject?: string }) =>
      withAdmin(
        program,
        async (admin, out) => {
          const evidence = await admin.decisions.evidence(
            opts.subject !== undefined ? { subject: opts.subject } : {},
          );
          out.result({ evidence }, () => JSON.stringify({ evidence }, null, 2));
        },
        { action: 'state.read' },
      )(),
    );
}
