/**
 * @module `toolgate apply -f` with the kinds DestinationSet, Operator and OwnerChannel, as an
 * operator runs it (the built CLI in a child process on a real database): a channel's URL read
 * from the CLI's own environment (`url_env`), never printed in the plan, never stored in plain; an
 * account created as the CLI's operator; the same file again changes nothing; a credential in an
 * Operator document refused with exit code 2 and nothing written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, runCli } from '../support/cli.js';
import { type Receiver, webhookReceiver } from '../support/webhook-receiver.js';

/** The admin's setting this test's loopback receiver needs, for every CLI run. */
const LOOPBACK_ENV = { TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: '1' };
const CANARY = 'cli-canary-6c0ffee42d-never-printed';

let dir = '';
let hook: Receiver;

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const DECLARED = `
kind: DestinationSet
spec: { name: partners, kind: email, members: [Bea@Partner.Example] }
---
kind: Operator
spec: { id: audra, roles: [auditor], name: Audra }
---
kind: OwnerChannel
spec: { name: alerts, team: payments, url_env: PAYMENTS_HOOK }
`;

before(async () => {
  ensureBuilt();
  hook = await webhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-apply-kinds-cli-'));
});
after(async () => {
  await hook.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('the three kinds apply from a file; the URL comes from the environment and is never printed nor stored plain', async () => {
  const env = { ...LOOPBACK_ENV, PAYMENTS_HOOK: `${hook.url}/T1/B1/${CANARY}` };
  const path = file('ops.yaml', DECLARED);
  const first = await runCli(dir, ['apply', '-f', path], env);
  assert.equal(first.code, 0, first.stderr);
  const lines = first.stdout.trim().split('\n');
  assert.deepEqual(lines.slice(0, 3), [
    '+ destination set partners: created (email, admin, 1 members)',
    '+ operator audra: created (auditor): no password or second factor yet',
    `+ owner channel payments/alerts: created (webhook to ${new URL(hook.url).origin}/…)`,
  ]);
  assert.ok(!(first.stdout + first.stderr).includes(CANARY));

  const again = await runCli(dir, ['--json', 'apply', '-f', path], env);
  assert.equal(again.code, 0, again.stderr);
  const plan = JSON.parse(again.stdout) as { changes: { action: string }[] };
  assert.deepEqual(
    plan.changes.map((c) => c.action),
    ['unchanged', 'unchanged', 'unchanged'],
  );
  assert.ok(!again.stdout.includes(CANARY));

  const shown = await runCli(dir, ['--json', 'operators', 'show', 'audra'], env);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /"created_by": ?"admin-token"/);
  const listed = await runCli(dir, ['channels', 'list'], env);
  assert.match(listed.stdout, /payments\s+alerts/);
  assert.ok(!listed.stdout.includes(CANARY));
  const database = readFileSync(join(dir, 'tg.db')).toString('latin1');
  assert.ok(!database.includes(CANARY), 'the URL is sealed in the database');
});

test('without the variable, or with a password in an Operator document: refused (exit 2), nothing written', async () => {
  const missing = await runCli(dir, ['--json', 'apply', '-f', join(dir, 'ops.yaml')], LOOPBACK_ENV);
  assert.equal(missing.code, 2, missing.stderr);
  const refusal = JSON.parse(missing.stdout) as { error: { code: string; message: string } };
  assert.equal(refusal.error.code, 'CONFIG_INVALID');
  assert.match(refusal.error.message, /PAYMENTS_HOOK is not set/);

  const withPassword = file(
    'password.yaml',
    `kind: Operator\nspec: { id: paul, roles: [auditor], password: ${CANARY} }\n`,
  );
  const refused = await runCli(dir, ['apply', '-f', withPassword], LOOPBACK_ENV);
  assert.equal(refused.code, 2, refused.stdout);
  assert.match(refused.stdout + refused.stderr, /carries no credential/);
  assert.ok(!(refused.stdout + refused.stderr).includes(CANARY));
  const paul = await runCli(dir, ['--json', 'operators', 'show', 'paul'], LOOPBACK_ENV);
  assert.notEqual(paul.code, 0, 'paul was not created');
});

test('a file that does not parse: refused by line and column, its text never printed (attack round 22, Y1)', async () => {
  const twice = file(
    'twice.yaml',
    `kind: OwnerChannel\nspec:\n  name: ops\n  team: payments\n  url: https://hooks.test/${CANARY}\n  url: https://hooks.test/${CANARY}\n`,
  );
  const unclosed = file(
    'unclosed.yaml',
    `kind: Operator\nspec: { id: paul, roles: [auditor], password: "${CANARY}\n`,
  );
  for (const path of [twice, unclosed]) {
    for (const json of [false, true]) {
      const r = await runCli(
        dir,
        [...(json ? ['--json'] : []), 'apply', '-f', path, '--dry-run'],
        LOOPBACK_ENV,
      );
      const said = r.stdout + r.stderr;
      assert.equal(r.code, 2, said);
      assert.match(said, /INPUT_MALFORMED/);
      assert.match(said, /at line \d+, column \d+/);
      assert.ok(!said.includes(CANARY), `the file's text was printed: ${said}`);
    }
  }
  const classification = file('classify.yaml', `tools:\n  - name: x\n   secret: ${CANARY}\n`);
  const r = await runCli(
    dir,
    ['providers', 'classify', 'p', 'x', '-f', classification],
    LOOPBACK_ENV,
  );
  assert.notEqual(r.code, 0);
  assert.ok(!(r.stdout + r.stderr).includes(CANARY), r.stdout + r.stderr);
});

test('the plan says what --prune does: what another set keeps is never promised to it nor counted (attack round 22, Y3)', async () => {
  const both = file(
    'both.yaml',
    'kind: DestinationSet\nspec: { name: shared, kind: email }\n---\nkind: DestinationSet\nspec: { name: mine, kind: email }\n',
  );
  const shared = file('shared.yaml', 'kind: DestinationSet\nspec: { name: shared, kind: email }\n');
  const other = file('other.yaml', 'kind: DestinationSet\nspec: { name: other, kind: email }\n');
  for (const [path, set] of [
    [both, 'a'],
    [shared, 'b'],
  ] as const) {
    const r = await runCli(dir, ['apply', '-f', path, '--set', set], LOOPBACK_ENV);
    assert.equal(r.code, 0, r.stderr);
  }
  const plan = await runCli(dir, ['apply', '-f', other, '--set', 'a', '--dry-run'], LOOPBACK_ENV);
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(
    plan.stdout,
    /^! destination set shared: no longer declared here: kept, set b still declares it \(--prune leaves it to that set\)$/m,
  );
  assert.match(
    plan.stdout,
    /^! destination set mine: no longer declared: kept \(apply with --prune to delete it\)$/m,
  );
  assert.match(
    plan.stdout,
    /^1 object\(s\) no longer declared and kept: apply with --prune to remove them$/m,
  );
  assert.match(plan.stdout, /^1 object\(s\) no longer declared and kept by a rule or another set/m);

  const pruned = await runCli(dir, ['apply', '-f', other, '--set', 'a', '--prune'], LOOPBACK_ENV);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.match(
    pruned.stdout,
    /^! destination set shared: no longer declared here: kept, set b still declares it$/m,
  );
  assert.match(pruned.stdout, /^- destination set mine: deleted \(0 members\)$/m);
  assert.match(
    pruned.stdout,
    /^2 change\(s\) applied$/m,
    'other created, mine deleted; shared is no change',
  );
  assert.doesNotMatch(pruned.stdout, /apply with --prune/);
});

test('the demo seed reviewer’s id is reserved for `operators create` and `apply`; a near id is anyone’s (attack round 22, Y7)', async () => {
  const created = await runCli(
    dir,
    ['operators', 'create', 'demo-seed', '--roles', 'auditor'],
    LOOPBACK_ENV,
  );
  assert.equal(created.code, 2, created.stdout + created.stderr);
  assert.match(created.stdout + created.stderr, /operator id demo-seed is reserved/);
  const applied = await runCli(
    dir,
    ['apply', '-f', file('seed.yaml', 'kind: Operator\nspec: { id: demo-seed, roles: [admin] }\n')],
    LOOPBACK_ENV,
  );
  assert.equal(applied.code, 2, applied.stdout + applied.stderr);
  assert.match(applied.stdout + applied.stderr, /reserved/);
  const near = await runCli(
    dir,
    ['operators', 'create', 'demo-seeder', '--roles', 'auditor'],
    LOOPBACK_ENV,
  );
  assert.equal(near.code, 0, near.stdout + near.stderr);
});
