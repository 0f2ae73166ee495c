/**
 * @module The `toolgate` program: its global options and the registration of each command group
 * (src/edge/cli/commands/), built without parsing anything, so that main.ts runs it and
 * scripts/gen-docs.ts renders docs/cli-reference.md from the same definitions. Building it must
 * never touch the database, the environment or the network.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { noteRunning, VERSION } from './command-kit.js';
import { registerAgents } from './commands/agents.js';
import { registerApply } from './commands/apply.js';
import { registerApprovals } from './commands/approvals.js';
import { registerApprovers } from './commands/approvers.js';
import { registerAudit } from './commands/audit.js';
import { registerBackup } from './commands/backup.js';
import { registerChanges } from './commands/changes.js';
import { registerChannels } from './commands/channels.js';
import { registerConfig } from './commands/config.js';
import { registerDecisions } from './commands/decisions.js';
import { registerDestinationSets } from './commands/destination-sets.js';
import { registerDoctor } from './commands/doctor.js';
import { registerEvents } from './commands/events.js';
import { registerGrants } from './commands/grants.js';
import { registerMcp } from './commands/mcp.js';
import { registerOperators } from './commands/operators.js';
import { registerProviders } from './commands/providers.js';
import { registerReports } from './commands/reports.js';
import { registerRuns } from './commands/runs.js';
import { registerSecrets } from './commands/secrets.js';
import { registerServe } from './commands/serve.js';
import { registerTools } from './commands/tools.js';

/** An empty data folder would be the working folder: refused, as an empty TOOLGATE_DB is. */
function nonEmptyDataDir(value: string): string {
  if (value.trim() === '') {
    throw new InvalidArgumentError(
      'the data folder cannot be empty: name a folder (or leave it unset for ./data)',
    );
  }
  return value;
}

export function buildProgram(): Command {
  const program = new Command()
    .name('toolgate')
    .description('A governed tool gateway for AI agents')
    .version(VERSION)
    .addOption(
      // No fixed default: without --db or TOOLGATE_DB the database lives in the data folder
      // (dbUrl in command-kit.ts), so that --data-dir governs every file toolgate creates.
      new Option(
        '--db <url>',
        'database: sqlite:PATH or postgres://… (default: sqlite:<data-dir>/toolgate.db)',
      ).env('TOOLGATE_DB'),
    )
    .option('--json', 'print JSON')
    .addOption(
      new Option(
        '--data-dir <dir>',
        'where toolgate keeps its files: the SQLite database and the admin token unless --db or --admin-token-file say otherwise, the approval and audit signing keys, the secrets master key',
      )
        .env('TOOLGATE_DATA_DIR')
        .default('./data')
        .argParser(nonEmptyDataDir),
    )
    .addOption(
      new Option(
        '--config <file>',
        'settings file (YAML or JSON, see `toolgate config schema`): fills every setting its variable does not set; flags win over both',
      ).env('TOOLGATE_CONFIG'),
    )
    .option(
      '--token-file <path>',
      'a personal operator token (tgo_…) to act as; default TOOLGATE_TOKEN, else the bootstrap admin token',
    )
    .showHelpAfterError()
    // The operator authority names the command in the audit record of a refusal.
    .hook('preAction', (root, running) => noteRunning(root, running));

  // Registered in this order: `toolgate --help` lists them so.
  registerServe(program);
  registerMcp(program);
  registerApply(program);
  registerTools(program);
  registerAgents(program);
  registerGrants(program);
  registerChanges(program);
  registerRuns(program);
  registerApprovers(program);
  registerApprovals(program);
  registerChannels(program);
  registerEvents(program);
  registerSecrets(program);
  registerReports(program);
  registerDoctor(program);
  registerConfig(program);
  registerAudit(program);
  registerDecisions(program);
  registerBackup(program);
  registerOperators(program);
  registerProviders(program);
  registerDestinationSets(program);
  return program;
}
