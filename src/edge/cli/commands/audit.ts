/**
 * @module `toolgate audit`: verify, checkpoint and export the tamper-evident audit log; read,
 * search, erase and sweep the classified store of raw arguments (every read audited).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { dbLocation } from '../../../api/index.js';
import { isStoreCorrupt } from '../../../core/index.js';
import { operatorActor } from '../../../domain/operators/index.js';
import {
  type ClassifiedRecord,
  checkSelector,
  LogVerifier,
  type VerifyReport,
  verifyBundle,
} from '../../../records/audit/index.js';
import { type GlobalOptions, int, readInput, withAdmin } from '../command-kit.js';
import { exitCodeOf } from '../exit-codes.js';
import { makeOutput, type Output, reportError } from '../output.js';

function printVerify(out: Output, report: VerifyReport, where: string): void {
  out.result(report, () => {
    const p = report.firstProblem;
    const head = report.ok
      ? `ok: ${where}: ${report.records} records chain, ${report.checkpoints} checkpoints verify (signed up to ${report.signedSize}, ${report.unsignedRecords} after the last checkpoint)`
      : `FAILED: ${where}: ${p?.seq !== null && p?.seq !== undefined ? `record ${p.seq}: ` : ''}${p?.message ?? ''}`;
    const more = report.problems.slice(1).map((q) => `  also: ${q.message}`);
    return [head, ...more].join('\n');
  });
  // Not a refusal: the check ran and found damage, which a monitoring script tells apart.
  if (!report.ok) process.exitCode = exitCodeOf('verification_failed');
}

/** Damage found while opening (before any record is read) is still a verification finding. */
function printOpeningDamage(out: Output, err: unknown, db: string | undefined): boolean {
  if (!isStoreCorrupt(err)) return false;
  const verifier = new LogVerifier({ verifiers: [] }, []);
  verifier.storeCorrupt(
    err instanceof Error
      ? `${String((err as { code?: unknown }).code)}: ${err.message}`
      : 'unreadable',
  );
  printVerify(out, verifier.finish(), db !== undefined ? dbLocation(db) : 'the database');
  return true;
}

export function registerAudit(program: Command): void {
  const audit = program
    .command('audit')
    .description('the tamper-evident audit log: verify, checkpoint, export');

  registerClassified(program, audit);

  audit
    .command('verify')
    .description(
      'recompute the chain, the Merkle tree and every checkpoint; name the first bad record',
    )
    .option('--bundle <dir>', 'check an exported bundle offline (no database)')
    .option('--key <file>', 'the trusted verifier key (NAME+ID+KEY); default: the data folder key')
    .action(async (opts: { bundle?: string; key?: string }) => {
      const globals = program.opts<GlobalOptions>();
      const out = makeOutput(globals.json === true);
      if (opts.bundle !== undefined) {
        try {
          const key = opts.key !== undefined ? readInput(opts.key, '--key') : undefined;
          const report = verifyBundle(opts.bundle, key !== undefined ? { key } : {});
          printVerify(out, report, `bundle ${opts.bundle} (records ${report.from}..${report.to})`);
        } catch (err) {
          process.exitCode = reportError(err, out.json);
        }
        return;
      }
      if (opts.key === undefined && !existsSync(join(globals.dataDir, 'audit-signing-key.pem'))) {
        process.exitCode = reportError(
          new TypeError(
            `no audit key in ${globals.dataDir}: pass --data-dir, or --key with the verifier key you trust`,
          ),
          out.json,
        );
        return;
      }
      await withAdmin(
        program,
        async (admin) => {
          const keys = opts.key !== undefined ? [readInput(opts.key, '--key')] : undefined;
          const report = await admin.audit.verify(keys ? { keys } : {});
          printVerify(out, report, admin.health.location);
        },
        { action: 'state.read', audit: { checkpoints: false } },
        (err, out) => printOpeningDamage(out, err, globals.db),
      )();
    });

  audit
    .command('checkpoint')
    .description('sign a checkpoint of the log as it stands now')
    .action(() =>
      withAdmin(
        program,
        async (admin, out) => {
          const cp = await admin.audit.checkpoint();
          out.result(cp, () => cp?.note ?? 'the log is empty');
        },
        { audit: { checkpoints: true, checkpointIntervalMs: 0 } },
      )(),
    );

  audit
    .command('export')
    .description('write records, checkpoints and the public key for offline verification')
    .requiredOption('--out <dir>', 'bundle folder')
    .addOption(
      new Option('--from <seq>', 'first record').argParser(int(1, Number.MAX_SAFE_INTEGER)),
    )
    .addOption(new Option('--to <seq>', 'last record').argParser(int(1, Number.MAX_SAFE_INTEGER)))
    .action((opts: { out: string; from?: number; to?: number }) =>
      withAdmin(
        program,
        async (admin, out) => {
          const result = await admin.audit.exportBundle(opts.out, {
            ...(opts.from !== undefined ? { from: opts.from } : {}),
            ...(opts.to !== undefined ? { to: opts.to } : {}),
          });
          out.result(
            { ...result, out: opts.out },
            () =>
              `exported records ${result.from}..${result.to} (${result.records}) to ${opts.out}, covered by the checkpoint at ${result.checkpoint}`,
          );
        },
        { audit: { checkpoints: true, checkpointIntervalMs: 0 } },
      )(),
    );
}

function describeRecord(r: ClassifiedRecord): string {
  return [
    `call ${r.call_id} at ${r.at} (agent ${r.agent_id ?? '-'}, user ${r.user_id ?? '-'}, tool ${r.tool_id ?? '-'})`,
    `  args:   ${JSON.stringify(r.args)}`,
    `  masked: ${JSON.stringify(r.masked)}`,
  ].join('\n');
}

interface SelectorOptions {
  value?: string;
  user?: string;
  call?: string;
}

function selectorOf(opts: SelectorOptions) {
  return checkSelector({
    ...(opts.value !== undefined ? { value: opts.value } : {}),
    ...(opts.user !== undefined ? { user: opts.user } : {}),
    ...(opts.call !== undefined ? { call_id: opts.call } : {}),
  });
}

/**
 * `toolgate audit classified`: the raw arguments kept apart from the chained log, for admins and
 * auditors (erasure and the sweep: admins). docs/security-model.md, "Personal data and the audit
 * log".
 */
export function registerClassified(program: Command, audit: Command): void {
  const classified = audit
    .command('classified')
    .description(
      "calls' raw arguments, kept apart from the audit log with a retention period: read, search, erase, sweep",
    );

  classified
    .command('show <call-id>')
    .description("one call's raw arguments and their keyed hashes (the read is audited)")
    .action((callId: string) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const r = await admin.classified.read(callId, operatorActor(operator, 'cli'));
          out.result(r, () => describeRecord(r));
        },
        { action: 'state.read' },
      )(),
    );

  classified
    .command('search')
    .description('find raw arguments carrying a value, or of a user (the search is audited)')
    .option('--value <text>', 'a value the arguments carry (an e-mail address, an IBAN)')
    .option('--user <id>', "a user's calls")
    .action((opts: SelectorOptions) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const found = await admin.classified.search(
            selectorOf(opts),
            operatorActor(operator, 'cli'),
          );
          out.result(found, () =>
            [
              ...(found.token !== null ? [`keyed hash in the audit log: ${found.token}`] : []),
              `${found.items.length} call(s)${found.omitted > 0 ? ` (${found.omitted} more not shown)` : ''}`,
              ...found.items.map(describeRecord),
            ].join('\n'),
          );
        },
        { action: 'state.read' },
      )(),
    );

  classified
    .command('erase')
    .description(
      'erase raw arguments carrying a value, of a user, or of one call (the audit log and its verification are untouched)',
    )
    .option('--value <text>', 'every call whose arguments carry this value')
    .option('--user <id>', 'every call of this user')
    .option('--call <call-id>', 'one call')
    .action((opts: SelectorOptions) =>
      withAdmin(program, async (admin, out, operator) => {
        const r = await admin.classified.erase(selectorOf(opts), operatorActor(operator, 'cli'));
        out.result(r, () => `erased the raw arguments of ${r.erased} call(s)`);
      })(),
    );

  classified
    .command('sweep')
    .description('remove raw arguments older than the retention period now')
    .action(() =>
      withAdmin(program, async (admin, out) => {
        const removed = await admin.classified.sweep();
        const days = admin.classified.retentionDays;
        out.result(
          { removed, retention_days: days },
          () => `removed the raw arguments of ${removed} call(s) older than ${days} days`,
        );
      })(),
    );
}
