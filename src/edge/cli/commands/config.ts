/**
 * @module `toolgate config`: checks a settings file (settings-file.ts) the way a start would read
 * it — the same readers, the files they name, the gateway's own check before it opens
 * (start-settings.ts) — and prints its JSON Schema. No database needed, none reached.
 */

import { join } from 'node:path';
import type { Command } from 'commander';
import { settingProblems } from '../../../api/index.js';
import { type Problem, problem, ToolgateError } from '../../../core/index.js';
import { originPolicy } from '../../mcp/origin-guard.js';
import { type GlobalOptions, splitList } from '../command-kit.js';
import { makeOutput, reportError } from '../output.js';
import { ADMIN_TOKEN_FILE } from '../runtime-files.js';
import { fillFromSettings, readSettingsFile, SETTINGS, settingsSchema } from '../settings-file.js';
import { startProblems } from '../start-settings.js';
import { serveOptionProblems } from './serve.js';

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description('the settings file: check one, print its JSON Schema');

  config
    .command('check <file>')
    .description(
      'check a settings file as a start would read it (schema, then each setting the way serve reads it)',
    )
    .action(async (file: string) => {
      const out = makeOutput(program.opts<GlobalOptions>().json === true);
      try {
        const checked = await checkSettings(file);
        out.result(checked, () =>
          [
            ...checked.settings.map(
              (s) =>
                `${s.path.padEnd(40)} ${s.env}${s.overridden ? '  (set in the environment: it wins)' : ''}`,
            ),
            `${file}: ${checked.settings.length} setting(s), valid`,
          ].join('\n'),
        );
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
    });

  config
    .command('schema')
    .description('print the JSON Schema of the settings file')
    .action(() => {
      process.stdout.write(`${JSON.stringify(settingsSchema(), null, 2)}\n`);
    });
}

interface CheckedSetting {
  readonly path: string;
  readonly env: string;
  readonly overridden: boolean;
}

/** Refuses (INPUT_INVALID, every problem) a file a start would refuse; else lists its settings. */
async function checkSettings(file: string): Promise<{ file: string; settings: CheckedSetting[] }> {
  const { env, problems } = readSettingsFile(file);
  if (problems.length > 0) throw invalid(file, problems);
  const merged: NodeJS.ProcessEnv = { ...process.env };
  const { overridden } = fillFromSettings(merged, env);
  const found = [
    // serve's own options from the environment (the file's values passed its schema above).
    ...serveOptionProblems(merged).map(({ env: name, message }) => {
      const at = SETTINGS.find((s) => s.env === name)?.path;
      return problem(
        at ? `/${at.replaceAll('.', '/')}` : '',
        `${name} ${message}`,
        'setting.value',
      );
    }),
    ...settingProblems('/server', () =>
      originPolicy(
        splitList(merged.TOOLGATE_ALLOWED_ORIGINS),
        splitList(merged.TOOLGATE_ALLOWED_HOSTS),
      ),
    ),
    ...(await startProblems(merged, {
      publicUrl: merged.TOOLGATE_PUBLIC_URL ?? 'http://127.0.0.1:8080',
      adminTokenFile:
        merged.TOOLGATE_ADMIN_TOKEN_FILE ??
        join(merged.TOOLGATE_DATA_DIR ?? './data', ADMIN_TOKEN_FILE),
      adminTokenOff: false,
      dataDir: merged.TOOLGATE_DATA_DIR ?? './data',
    })),
  ];
  if (found.length > 0) throw invalid(file, found);
  const settings = SETTINGS.filter((s) => env[s.env] !== undefined).map((s) => ({
    path: s.path,
    env: s.env,
    overridden: overridden.includes(s.env),
  }));
  return { file, settings };
}

function invalid(file: string, problems: Problem[]): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError(
    'INPUT_INVALID',
    `${file} is not a valid settings file: ${problems.length} problem(s) (first: ${problems[0]?.pointer || '(file)'} ${problems[0]?.message ?? ''})`,
    { problems },
  );
}
