/**
 * @module `toolgate decisions`: decisions signed with a passkey, checked offline
 * (docs/architecture.md §6, "Passkeys bound to the decision"). `verify` rebuilds each decision's
 * commitment from the store (the live database, or a restored backup through `--db`) or from an
 * evidence file `export` wrote, and checks that a passkey the verifier trusts for the approver
 * signed exactly that decision: the challenge, origin, RP ID hash, user verification and
 * signature, and the audit record naming the assertion. The trusted keys are the store's enrolled
 * passkeys, or for `--file` the keys file `--keys` names (`decisions keys` writes it): an evidence
 * file's own keys prove nothing, so `--file` without `--keys` is a usage error. A file that is not
 * JSON, not an evidence document, or holds a malformed entry is a usage error naming where (exit
 * 2); nothing to verify (an empty file, a `--subject` with no passkey-signed decision) is NOT_FOUND
 * (exit 4), never success. Read only; a failed check exits 6.
 */
import type { Command } from 'commander';
import {
  type DecisionProofReport,
  parseDecisionEvidence,
  proveDecisions,
  type TrustedKey,
} from '../../../api/index.js';
import { parseFileText, problem, ToolgateError } from '../../../core/index.js';
import { type GlobalOptions, readInput, withAdmin } from '../command-kit.js';
import { exitCodeOf } from '../exit-codes.js';
import { makeOutput, type Output, reportError } from '../output.js';

/** Evidence files hold every assertion of a store: a generous bound, still a bound. */
const MAX_EVIDENCE_BYTES = 64 * 1024 * 1024;

interface VerifyOptions {
  readonly subject?: string;
  readonly file?: string;
  readonly keys?: string;
  readonly rpId?: string;
  readonly origin?: string;
}

/**
 * A check of nothing proves nothing: no passkey-signed decision in the file, the store, or of the
 * `--subject` asked for is NOT_FOUND (exit 4), never "ok" over zero decisions (attack round 27, G5).
 */
function nothingToVerify(where: string, subject: string | undefined): ToolgateError<'NOT_FOUND'> {
  return new ToolgateError(
    'NOT_FOUND',
    `no passkey-signed decisions to verify in ${where}${subject !== undefined ? ` for subject ${subject}` : ''}: nothing was checked`,
    {},
  );
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

/** Keys files hold one entry per enrolled passkey: small. */
const MAX_KEYS_BYTES = 4 * 1024 * 1024;

/** The trusted keys of `--keys`: `{ keys: [{ operator_id, credential_id, public_key }] }`. */
function trustedKeysOf(path: string): TrustedKey[] {
  const invalid = (why: string) =>
    new ToolgateError('INPUT_INVALID', `--keys ${path}: ${why}`, {
      problems: [problem('/keys', why, 'decisions.keys')],
    });
  // Not JSON: its kind and position, never its text (core/parse-file-text.ts).
  const parsed = parseFileText(readInput(path, '--keys', MAX_KEYS_BYTES), `--keys ${path}`, 'json');
  const list = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw invalid('no "keys" list (write it with `decisions keys`)');
  return list.map((k: unknown) => {
    const e = (k ?? {}) as Record<string, unknown>;
    if (
      typeof e.operator_id !== 'string' ||
      typeof e.credential_id !== 'string' ||
      typeof e.public_key !== 'string'
    )
      throw invalid('each key names operator_id, credential_id and public_key');
    return { operator_id: e.operator_id, credential_id: e.credential_id, public_key: e.public_key };
  });
}

function relyingParty(opts: VerifyOptions): { rpId?: string; origin?: string } {
  return {
    ...(opts.rpId !== undefined ? { rpId: opts.rpId } : {}),
    ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
  };
}

/** `verify --file`: an evidence file against the keys the verifier trusts (`--keys`, required). */
async function verifyFile(
  out: ReturnType<typeof makeOutput>,
  opts: VerifyOptions,
  file: string,
): Promise<void> {
  try {
    if (opts.keys === undefined) {
      throw new ToolgateError(
        'INPUT_INVALID',
        '--file needs --keys <keys.json>: an evidence file carries its own public keys, which prove nothing; verify against the passkeys you trust (`toolgate decisions keys` on the store you trust writes them)',
        { problems: [problem('/keys', 'missing', 'decisions.keys_required')] },
      );
    }
    const trustedKeys = trustedKeysOf(opts.keys);
    // Parse, then check: text that is not JSON, a value that is no evidence document and a
    // malformed entry are each INPUT_INVALID naming where (exit 2), before anything is verified.
    const text = readInput(file, '--file', MAX_EVIDENCE_BYTES);
    const evidence = parseDecisionEvidence(
      parseFileText(text, `--file ${file}`, 'json'),
      `--file ${file}`,
    ).filter((e) => opts.subject === undefined || e.assertion.subject_id === opts.subject);
    if (evidence.length === 0) throw nothingToVerify(file, opts.subject);
    printProofs(out, await proveDecisions(evidence, { ...relyingParty(opts), trustedKeys }), file);
  } catch (err) {
    process.exitCode = reportError(err, out.json);
  }
}

export function registerDecisions(program: Command): void {
  const decisions = program
    .command('decisions')
    .description('decisions signed with a passkey: verify offline, export the evidence');

  decisions
    .command('verify')
    .description(
      "check that each passkey-signed decision's credential signed exactly that decision and its audit record is the signer's, about it (store, restored backup, or --file); exits 6 when one does not verify, 4 when there is none to verify, 2 for a file that is not an evidence document",
    )
    .option('--subject <id>', 'only this approval or change id (a review: tool@version)')
    .option(
      '--file <evidence.json>',
      'check an evidence file `decisions export` wrote (no database); needs --keys',
    )
    .option(
      '--keys <keys.json>',
      "the passkeys you trust, as `decisions keys` wrote them from the store you trust (required with --file: the evidence's own keys prove nothing)",
    )
    .option('--rp-id <id>', 'the relying party ID the passkeys must be for (default: as stored)')
    .option('--origin <url>', 'the origin the browser must have signed at (default: as stored)')
    .action(async (opts: VerifyOptions) => {
      const globals = program.opts<GlobalOptions>();
      const out = makeOutput(globals.json === true);
      if (opts.file !== undefined) {
        await verifyFile(out, opts, opts.file);
        return;
      }
      if (opts.keys !== undefined) {
        process.exitCode = reportError(
          new ToolgateError('INPUT_INVALID', '--keys is for --file: the store has its own keys', {
            problems: [problem('/keys', 'without --file', 'decisions.keys_without_file')],
          }),
          out.json,
        );
        return;
      }
      await withAdmin(
        program,
        async (admin) => {
          const report = await admin.decisions.verify({
            ...(opts.subject !== undefined ? { subject: opts.subject } : {}),
            ...relyingParty(opts),
          });
          if (report.checked === 0) throw nothingToVerify(admin.health.location, opts.subject);
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

  decisions
    .command('keys')
    .description(
      'write the passkeys this store vouches for (operator, credential id, public key; removed ones recorded at enrolment too) as JSON, for `verify --file --keys`',
    )
    .action(() =>
      withAdmin(
        program,
        async (admin, out) => {
          const keys = await admin.decisions.keys();
          out.result({ keys }, () => JSON.stringify({ keys }, null, 2));
        },
        { action: 'state.read' },
      )(),
    );
}
