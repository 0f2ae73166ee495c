/**
 * @module `toolgate providers` for resources, resource templates and prompts, as an admin runs it:
 * the built CLI in real child processes on a real SQLite database, against the real upstream
 * fixture (test/fixtures/mcp/resources-server.mjs) in the namespace sandbox. `apply -f` imports
 * the entries unclassified, `providers show` lists them with their pins, `classify-entry`
 * registers the catalog entry, and an entry the upstream does not list is refused.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { ensureBuilt, runCli } from '../support/cli.js';
import { fixtureProvider } from './provider-support.js';

describe('toolgate providers classify-entry', () => {
  let dir: string;
  // The upstream's mode file lives apart: no sandbox may see toolgate's own folder.
  let stateDir: string;

  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-resources-cli-'));
    chmodSync(dir, 0o755);
    stateDir = mkdtempSync(join(tmpdir(), 'toolgate-resources-cli-state-'));
    chmodSync(stateDir, 0o755);
    writeFileSync(join(stateDir, 'mode'), 'benign');
    const spec = fixtureProvider(
      'notes',
      'resources-server.mjs',
      [join(stateDir, 'mode')],
      stateDir,
    );
    writeFileSync(
      join(dir, 'provider.yaml'),
      stringify({ apiVersion: 'toolgate/v1', kind: 'Provider', spec }),
    );
    writeFileSync(
      join(dir, 'public.yaml'),
      stringify({
        data_access: 'public',
        access_tier: 'public',
        required_capabilities: ['notes:read'],
      }),
    );
  });

  after(() => {
    for (const d of [dir, stateDir]) {
      rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  });

  test('apply imports the entries unclassified; classify-entry registers the catalog entry', async () => {
    const applied = await runCli(dir, ['apply', '-f', join(dir, 'provider.yaml')]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(
      applied.stdout,
      /1 tools imported, unclassified until classified; 5 resources or prompts too/,
    );
    const shown = await runCli(dir, ['--json', 'providers', 'show', 'notes']);
    assert.equal(shown.code, 0, shown.stderr);
    const entries = (
      JSON.parse(shown.stdout) as { entries: { kind: string; key: string; state: string }[] }
    ).entries;
    assert.equal(entries.find((e) => e.key === 'notes://readme')?.state, 'unclassified');
    assert.equal(entries.find((e) => e.key === 'exfil')?.state, 'quarantined');

    const classified = await runCli(dir, [
      '--json',
      'providers',
      'classify-entry',
      'notes',
      'resource',
      'notes://readme',
      '-f',
      join(dir, 'public.yaml'),
    ]);
    assert.equal(classified.code, 0, classified.stderr);
    const r = JSON.parse(classified.stdout) as {
      tool: { id: string; lifecycle: string };
      review?: { id: string };
    };
    assert.match(r.tool.id, /^notes\.resource\.readme-[0-9a-f]{8}$/);
    // Third-party: a draft until an approver reviews it.
    assert.equal(r.tool.lifecycle, 'draft');
    assert.ok(r.review?.id);
    const human = await runCli(dir, ['providers', 'show', 'notes']);
    assert.match(human.stdout, /resource\s+notes:\/\/readme\s+classified/);
  });

  test('an entry the upstream does not list is refused with PROVIDER_ENTRY_STATE', async () => {
    const run = await runCli(dir, [
      '--json',
      'providers',
      'classify-entry',
      'notes',
      'prompt',
      'no-such-prompt',
      '-f',
      join(dir, 'public.yaml'),
    ]);
    assert.equal(run.code, 3);
    assert.equal(
      (JSON.parse(run.stdout) as { error: { code: string } }).error.code,
      'PROVIDER_ENTRY_STATE',
    );
  });
});
