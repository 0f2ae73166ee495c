/**
 * @module `toolgate backup` and `toolgate restore` (docs/operations.md, "Backups and restore"): the
 * database, copied online while `serve` runs (a PostgreSQL dump), and the data folder's key files
 * with a manifest of their hashes; restored into a new data folder and database only.
 */
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import {
  backup,
  ensureMasterKeyFile,
  inlineMasterKey,
  type RestoreResult,
  restore,
  restoreMasterKey,
} from '../../../api/index.js';
import { dbUrl, type GlobalOptions, VERSION } from '../command-kit.js';
import { exitCodeOf } from '../exit-codes.js';
import { makeOutput, reportError } from '../output.js';
import { ADMIN_TOKEN_FILE, dataFolderKeys } from '../runtime-files.js';

export function registerBackup(program: Command): void {
  program
    .command('backup <dir>')
    .description(
      'back up the database (online, while serve runs; PostgreSQL: pg_dump) and the data folder keys into a new folder',
    )
    .addOption(
      new Option(
        '--admin-token-file <path>',
        'the bootstrap admin token, where serve keeps it (default: <data-dir>/admin-token)',
      ),
    )
    .action(async (dir: string, opts: { adminTokenFile?: string }) => {
      const globals = program.opts<GlobalOptions>();
      const out = makeOutput(globals.json === true);
      try {
        const tokenFile = opts.adminTokenFile ?? join(globals.dataDir, ADMIN_TOKEN_FILE);
        const inline = inlineMasterKey();
        const manifest = await backup(dir, {
          db: dbUrl(globals),
          dataDir: globals.dataDir,
          keys: dataFolderKeys(globals.dataDir, tokenFile),
          version: VERSION,
          masterKey: inline,
          // Without TOOLGATE_MASTER_KEY the backup holds the master key file, made if the data
          // folder has none yet: every backup holds its key or a MAC under it.
          makeMasterKey: () => ensureMasterKeyFile(globals.dataDir),
        });
        const notes = [
          manifest.authentication
            ? `the master key comes from TOOLGATE_MASTER_KEY and is not in the backup: keep it apart from the backup (restore needs it, and checks the manifest's MAC under it: key ${manifest.authentication.key_id})`
            : 'the backup holds the master key file: its hashes catch damage, not a deliberate edit; keep it where you keep the data folder',
          ...(manifest.database_command
            ? [
                `INCOMPLETE: pg_dump is not installed here; write the database into the backup with:\n  ${manifest.database_command}`,
              ]
            : []),
        ];
        out.result({ dir, complete: manifest.database !== null, manifest, notes }, () =>
          [
            `backed up ${manifest.location} (toolgate ${manifest.toolgate_version}, ${manifest.migrations.length} migrations, newest ${manifest.migrations.at(-1) ?? '-'}) into ${dir}`,
            ...[...(manifest.database ? [manifest.database] : []), ...manifest.files].map(
              (f) => `  ${f.path.padEnd(34)} ${f.sha256}`,
            ),
            ...notes,
          ].join('\n'),
        );
        // A backup without its database is no backup a script may take for complete.
        if (manifest.database === null) process.exitCode = exitCodeOf('unavailable');
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
    });

  program
    .command('restore <dir>')
    .description(
      'restore a backup into a new data folder and a new database (checks every hash and the schema first)',
    )
    .action(async (dir: string) => {
      const globals = program.opts<GlobalOptions>();
      const out = makeOutput(globals.json === true);
      try {
        const result = await restore(dir, {
          db: dbUrl(globals),
          dataDir: globals.dataDir,
          masterKey: restoreMasterKey(),
          masterKeyInline: inlineMasterKey() !== null,
        });
        out.result({ dir, ...result }, () => restoredText(dir, result, globals.dataDir));
        if (!result.database.restored) process.exitCode = exitCodeOf('unavailable');
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
    });
}

function restoredText(dir: string, result: RestoreResult, dataDir: string): string {
  const m = result.manifest;
  const db = result.database;
  return [
    `restored the backup ${dir} (toolgate ${m.toolgate_version}, ${m.created_at}, ${m.migrations.length} migrations)`,
    `  ${result.authenticity.note}`,
    `  keys into ${dataDir}: ${result.files.join(', ') || 'none'}`,
    db.restored
      ? `  database into ${db.location}`
      : `  INCOMPLETE: the database was not restored; run:\n  ${db.command}`,
    ...(db.restored
      ? ['next: toolgate audit verify, then start serve (it migrates what is older)']
      : []),
  ].join('\n');
}
