/**
 * @module The generated references say what the code does: docs/cli-reference.md and
 * docs/rest-reference.md are rendered again in memory — the CLI from its command definitions, REST
 * from the /openapi.json a real gateway serves on 127.0.0.1 — and must equal the committed files.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  CLI_REFERENCE,
  fetchRestDescription,
  OPERATOR_ACTIONS_PAGE,
  REST_REFERENCE,
  renderCliReference,
  renderRestReference,
  SETTINGS_PAGE,
  withOperatorActions,
  withSettings,
} from '../../scripts/gen-docs.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIX = 'run `npm run docs` (node --import tsx scripts/gen-docs.ts) and commit the result';

/** The first line where two texts part, for a message a person can act on. */
function firstDifference(committed: string, generated: string): string {
  const a = committed.split('\n');
  const b = generated.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `line ${i + 1}:\n  committed: ${a[i] ?? '(end of file)'}\n  generated: ${b[i] ?? '(end of file)'}`;
  }
  return 'no difference';
}

/** Why a committed reference is not current (null when it is), naming the command that fixes it. */
function driftMessage(file: string, committed: string, generated: string): string | null {
  if (committed === generated) return null;
  const where = firstDifference(committed, generated);
  return `${file} is out of date with the code; ${FIX}.\nFirst difference at ${where}`;
}

function assertCurrent(file: string, generated: string): void {
  const message = driftMessage(file, readFileSync(join(ROOT, file), 'utf8'), generated);
  assert.equal(message, null, message ?? '');
}

test('docs/cli-reference.md is what the CLI definitions generate', () => {
  const generated = renderCliReference();
  // Every command group of the program is in it, so an empty render cannot pass as current.
  for (const command of ['serve', 'apply', 'tools list', 'audit verify', 'operators create'])
    assert.ok(generated.includes(`\`toolgate ${command}\``), `no section for toolgate ${command}`);
  assertCurrent(CLI_REFERENCE, generated);
});

test('docs/rest-reference.md is what the served OpenAPI document generates', async () => {
  const { doc, routes } = await fetchRestDescription();
  assert.ok(Object.keys(doc.paths).length > 50, 'the OpenAPI document lists the routes');
  const generated = renderRestReference(doc, routes);
  assert.ok(generated.includes('## `POST /v1/sessions/{id}/calls`'));
  assert.ok(generated.includes('an operator with one of the roles `admin`'));
  assertCurrent(REST_REFERENCE, generated);
});

test('a drifted reference is named with the line that differs and the command that fixes it', () => {
  const generated = renderCliReference();
  const drifted = generated.replace('`toolgate serve`', '`toolgate serve-old`');
  const message = driftMessage(CLI_REFERENCE, drifted, generated) ?? '';
  assert.match(message, /docs\/cli-reference\.md is out of date/);
  assert.match(message, /npm run docs/);
  assert.match(message, /committed: .*serve-old/);
  assert.equal(driftMessage(CLI_REFERENCE, generated, generated), null);
});

test('the route → role table in docs/operators-and-approvals.md is OPERATOR_ACTIONS', () => {
  const committed = readFileSync(join(ROOT, OPERATOR_ACTIONS_PAGE), 'utf8');
  const generated = withOperatorActions(committed);
  assert.ok(generated.includes('| `administer` | `admin` |'), 'the table lists the default action');
  assertCurrent(OPERATOR_ACTIONS_PAGE, generated);
});

test("the settings file's table in docs/configuration.md is SETTINGS", () => {
  const committed = readFileSync(join(ROOT, SETTINGS_PAGE), 'utf8');
  const generated = withSettings(committed);
  assert.ok(generated.includes('| `server.port` | `TOOLGATE_PORT` |'), 'the table lists the port');
  assertCurrent(SETTINGS_PAGE, generated);
});
