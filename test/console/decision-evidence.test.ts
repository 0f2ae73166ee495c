/**
 * An evidence file for `toolgate decisions verify --file`, from a real gateway whose approver
 * signed a call approval, a security review and a four-eyes change with a passkey (real chromium,
 * a virtual authenticator). The audit record that names each assertion must be the signer's own
 * and about the decision signed (attack round 27, G4): a record rewritten to name another
 * operator, another subject, or no actor fails the check (exit 6, the finding named), while the
 * export as written verifies (exit 0). And what is no evidence is said so (G5): text that is not
 * JSON, a JSON value that is not an evidence document (`{}`, `[]`, an audit bundle's file, a keys
 * file) and entries missing their fields are usage errors naming where (exit 2, never a
 * TypeError's words or the file's text); a file, or a `--subject`, with no passkey-signed
 * decision to check says so and exits 4 rather than claiming success.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type DecisionEvidence, proveDecisions } from '../../src/api/index.js';
import {
  type ConsoleGateway,
  closeMcpClient,
  ensureOperator,
  launchChromium,
  mcpClient,
  operator,
  startConsoleGateway,
  TEST_ADMIN,
  TEST_PASSWORD,
} from '../support/browser.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { pendingSend } from './console-support.js';

let browser: Browser;
let gw: ConsoleGateway;
let agent: Client;
let base: string;
let dir: string;
let context: BrowserContext;
let page: Page;
/** The export and the trusted keys as the CLI wrote them. */
let evidence: DecisionEvidence[];
let evidenceFile: string;
let keysFile: string;
const alice = operator('alice', ['approver']);

before(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-decision-evidence-'));
  gw = await startConsoleGateway({
    db: `sqlite:${join(dir, 'tg.db')}`,
    gateway: { passkeys: { required: true } },
  });
  // Browsers refuse an IP address as WebAuthn relying party: the console is opened at localhost.
  base = gw.base.replace('://127.0.0.1:', '://localhost:');
  agent = await mcpClient(gw.base, gw.supportKey);
  await ensureOperator(gw, alice);
  context = await browser.newContext();
  page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  await signInAndEnrol();
  await signDecisions();
  ensureBuilt();
  const exported = await runCli(dir, ['--json', 'decisions', 'export']);
  assert.equal(exported.code, 0, exported.stderr);
  evidence = (JSON.parse(exported.stdout) as { evidence: DecisionEvidence[] }).evidence;
  evidenceFile = join(dir, 'evidence.json');
  writeFileSync(evidenceFile, exported.stdout);
  const keys = await runCli(dir, ['--json', 'decisions', 'keys']);
  assert.equal(keys.code, 0, keys.stderr);
  keysFile = join(dir, 'keys.json');
  writeFileSync(keysFile, keys.stdout);
});

after(async () => {
  await context?.close();
  await closeMcpClient(agent);
  await browser?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Alice signs in with her TOTP code and enrols a passkey with a current one. */
async function signInAndEnrol(): Promise<void> {
  await page.goto(`${base}/console/login`);
  await page.locator('#operator').fill('alice');
  await page.locator('#password').fill(TEST_PASSWORD);
  await page.locator('#totp').fill(await gw.code('alice'));
  await Promise.all([
    page.waitForURL('**/console/inbox'),
    page.locator('#login-form button[type=submit]').click(),
  ]);
  await page.goto(`${base}/console/passkeys`);
  await page.locator('#passkey-name').fill('laptop');
  await page.locator('#totp').fill(await gw.code('alice'));
  await page.locator('#enrol-passkey').click();
  await page.locator('.flash', { hasText: 'Passkey enrolled' }).waitFor();
}

/**
 * Opens `path`, fills what the form needs (`fill`), clicks its passkey button and waits for the
 * flash the decision comes back with.
 */
async function decideWithPasskey(
  path: string,
  button: string,
  flash: RegExp,
  fill: () => Promise<void> = async () => {},
): Promise<void> {
  await page.goto(`${base}${path}`);
  await fill();
  await Promise.all([page.waitForURL(`**${path}`), page.locator(button).click()]);
  await page.waitForSelector('.flash');
  assert.match((await page.locator('.flash').textContent()) ?? '', flash);
}

/** One decision of each kind, signed with Alice's passkey in the console. */
async function signDecisions(): Promise<void> {
  const call = await pendingSend(agent, {
    to: 'ana@customer.example',
    subject: 'Refund',
    body: 'On its way.',
  });
  await decideWithPasskey(`/console/approvals/${call}`, '#approve-passkey', /Approved/);
  const def = (await gw.tg.catalog.get('send_email', '1.0.0')).definition as unknown as Record<
    string,
    unknown
  >;
  await gw.tg.config.apply(
    [
      {
        kind: 'Tool',
        spec: { ...def, id: 'partner_notify', name: 'partner_notify', access_tier: 'restricted' },
      },
    ],
    TEST_ADMIN,
  );
  const [review] = await gw.tg.admin.reviews.of('partner_notify', '1.0.0');
  assert.ok(review);
  await decideWithPasskey(
    `/console/reviews/${review.id}`,
    '#review-approve-passkey',
    /Review approved/,
    () => page.locator('#review-notes').fill('Recipient domain and egress checked.'),
  );
  const pending = (await gw.tg.changes.page('pending', { limit: 50 })).items;
  const change = pending.find((c) => c.kind === 'grant' && c.required === 2);
  assert.ok(change, 'the demo asks two approvers for a privileged grant');
  await decideWithPasskey(
    `/console/changes/${change.id}`,
    '#approve-passkey',
    /approval is recorded/,
  );
}

function ofKind(kind: string): DecisionEvidence {
  const found = evidence.find((e) => e.assertion.kind === kind);
  assert.ok(found, `the export holds a ${kind} signed with a passkey`);
  return found;
}

/** `e` with the audit record that names its assertion rewritten by `change`. */
function withRecord(
  e: DecisionEvidence,
  change: (record: Record<string, unknown>) => Record<string, unknown>,
): DecisionEvidence {
  let rewritten = 0;
  const events = e.events.map((ev) => {
    const d = (ev.details ?? {}) as Record<string, unknown>;
    if (d.assertion !== e.assertion.id) return ev;
    rewritten += 1;
    return change({ ...ev }) as unknown as typeof ev;
  });
  assert.equal(rewritten, 1, 'one audit record names the assertion');
  return { ...e, events };
}

/** The subject the audit record of `e` is about, as the gateway wrote it. */
function subjectOf(e: DecisionEvidence): string {
  const record = e.events.find(
    (ev) => ((ev.details ?? {}) as Record<string, unknown>).assertion === e.assertion.id,
  ) as { subject?: unknown } | undefined;
  return String(record?.subject);
}

async function verifyFile(
  doc: unknown,
  name: string,
  ...extra: string[]
): Promise<{ code: number; out: Record<string, unknown>; text: string }> {
  const file = join(dir, name);
  writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  const run = await runCli(dir, [
    '--json',
    'decisions',
    'verify',
    '--file',
    file,
    '--keys',
    keysFile,
    ...extra,
  ]);
  const text = run.stdout + run.stderr;
  let out: Record<string, unknown> = {};
  try {
    out = JSON.parse(run.stdout) as Record<string, unknown>;
  } catch {
    // Printed no JSON: the assertions below say what was expected.
  }
  return { code: run.code, out, text };
}

function problemsOf(out: Record<string, unknown>): string[] {
  const proofs = (out.proofs ?? []) as { problems: string[] }[];
  return proofs.flatMap((p) => p.problems);
}

test('the export records each decision under its signer and subject, and verifies as written (exit 0)', async () => {
  const kinds = evidence.map((e) => e.assertion.kind).sort();
  assert.deepEqual(kinds, ['approval', 'change', 'review']);
  for (const e of evidence) {
    const record = e.events.find(
      (ev) => ((ev.details ?? {}) as Record<string, unknown>).assertion === e.assertion.id,
    ) as { actor?: unknown; subject?: unknown } | undefined;
    assert.equal(record?.actor, 'operator:alice', `${e.assertion.kind}: the signer is the actor`);
  }
  assert.equal(
    subjectOf(ofKind('approval')),
    `approval:${ofKind('approval').assertion.subject_id}`,
  );
  assert.equal(subjectOf(ofKind('change')), `change:${ofKind('change').assertion.subject_id}`);
  assert.equal(subjectOf(ofKind('review')), 'tool:partner_notify@1.0.0');
  const benign = await verifyFile({ evidence }, 'as-written.json');
  assert.equal(benign.code, 0, benign.text);
  assert.equal(benign.out.ok, true);
  assert.equal(benign.out.checked, 3);
  const keys = await gw.tg.admin.decisions.keys();
  assert.equal((await proveDecisions(evidence, { trustedKeys: keys })).ok, true);
});

test('an audit record naming another actor, another subject or no actor fails verify --file (exit 6, named)', async () => {
  const keys = await gw.tg.admin.decisions.keys();
  for (const kind of ['approval', 'review', 'change']) {
    const real = ofKind(kind);
    const otherSubject =
      kind === 'review'
        ? 'tool:partner_fax@1.0.0'
        : `${kind}:${kind === 'approval' ? 'apr' : 'chg'}_someother`;
    const cases: [string, DecisionEvidence, RegExp][] = [
      [
        'another actor',
        withRecord(real, (r) => ({ ...r, actor: 'operator:mallory' })),
        /written by operator:mallory, not by operator:alice who signed/,
      ],
      [
        'another subject',
        withRecord(real, (r) => ({ ...r, subject: otherSubject })),
        new RegExp(`is about ${otherSubject}, not ${subjectOf(real)}`),
      ],
      ['no actor', withRecord(real, ({ actor: _actor, ...r }) => r), /names no actor/],
      ['no subject', withRecord(real, ({ subject: _subject, ...r }) => r), /names no subject/],
    ];
    for (const [what, tampered, words] of cases) {
      const proved = await proveDecisions([tampered], { trustedKeys: keys });
      assert.equal(proved.ok, false, `${kind}, ${what}: refused`);
      assert.match(proved.proofs[0]?.problems.join('; ') ?? '', words, `${kind}, ${what}`);
    }
    // The CLI on a file whose record names another operator and one about another subject.
    const run = await verifyFile(
      {
        evidence: [
          withRecord(real, (r) => ({ ...r, actor: 'operator:mallory' })),
          withRecord(real, (r) => ({ ...r, subject: otherSubject })),
        ],
      },
      `tampered-${kind}.json`,
    );
    assert.equal(run.code, 6, run.text);
    assert.equal(run.out.ok, false);
    assert.equal(run.out.failed, 2);
    const problems = problemsOf(run.out).join('; ');
    assert.match(problems, /written by operator:mallory/);
    assert.match(problems, /is about /);
  }
  // The benign neighbour: each decision as exported, one at a time.
  for (const kind of ['approval', 'review', 'change']) {
    const run = await verifyFile({ evidence: [ofKind(kind)] }, `one-${kind}.json`);
    assert.equal(run.code, 0, run.text);
  }
});

test('what is no evidence is a usage error (exit 2) naming where, never a TypeError or the text', async () => {
  const secretish = '{"evidence": [tgo_do_not_echo_this';
  const badJson = await verifyFile(secretish, 'bad.json');
  assert.equal(badJson.code, 2, badJson.text);
  const badBody = (badJson.out.error ?? {}) as { code?: string; message?: string };
  assert.equal(badBody.code, 'INPUT_INVALID');
  assert.match(String(badBody.message), /bad\.json: not valid JSON/);
  assert.doesNotMatch(badJson.text, /tgo_do_not_echo_this|Unexpected token|a bug/);

  const bundle = join(dir, 'bundle');
  const exported = await runCli(dir, ['--json', 'audit', 'export', '--out', bundle]);
  assert.equal(exported.code, 0, exported.stderr);
  const auditFile = readFileSync(join(bundle, 'context.json'), 'utf8');
  const keysText = readFileSync(keysFile, 'utf8');
  for (const [what, doc] of [
    ['an empty object', '{}'],
    ['an array', '[]'],
    ['a number', '7'],
    ['an audit bundle', auditFile],
    ['a keys file', keysText],
    ['evidence that is no list', '{"evidence": {"assertion": 1}}'],
  ] as const) {
    const run = await verifyFile(doc, 'not-evidence.json');
    assert.equal(run.code, 2, `${what}: ${run.text}`);
    const body = (run.out.error ?? {}) as { code?: string; message?: string; details?: unknown };
    assert.equal(body.code, 'INPUT_INVALID', what);
    assert.match(String(body.message), /not an evidence document/, what);
    assert.deepEqual(
      ((body.details as { problems: { pointer: string }[] }).problems ?? []).map((p) => p.pointer),
      ['/evidence'],
      what,
    );
  }

  const real = ofKind('approval');
  const { signature: _signature, ...unsigned } = real.assertion;
  const malformed = {
    evidence: [
      {},
      null,
      { ...real, assertion: { ...real.assertion, kind: 5 } },
      { ...real, assertion: unsigned },
      { ...real, events: 'none' },
      { ...real, events: [{ action: 'approval.approved', details: 'text' }] },
      { ...real, approval: { ...real.approval, args_hash: null } },
      real,
    ],
  };
  const run = await verifyFile(malformed, 'malformed.json');
  assert.equal(run.code, 2, run.text);
  const body = (run.out.error ?? {}) as { code?: string; details?: unknown; message?: string };
  assert.equal(body.code, 'INPUT_INVALID');
  assert.doesNotMatch(run.text, /Cannot read properties|TypeError|undefined \(reading/);
  const problems = (body.details as { problems: { pointer: string; rule: string }[] }).problems;
  assert.deepEqual(
    problems.map((p) => p.pointer),
    [
      '/evidence/0/assertion',
      '/evidence/0/events',
      '/evidence/1',
      '/evidence/2/assertion/kind',
      '/evidence/3/assertion/signature',
      '/evidence/4/events',
      '/evidence/5/events/0/details',
      '/evidence/6/approval/args_hash',
    ],
  );
  assert.ok(problems.every((p) => p.rule === 'decisions.evidence'));
  assert.match(String(body.message), /\/evidence\/0\/assertion/);
});

test('no decision to verify is said so and exits 4, in a file, for a --subject, and on the store; the export still passes', async () => {
  const empty = await verifyFile({ evidence: [] }, 'empty.json');
  assert.equal(empty.code, 4, empty.text);
  const body = (empty.out.error ?? {}) as { code?: string; message?: string };
  assert.equal(body.code, 'NOT_FOUND');
  assert.match(String(body.message), /no passkey-signed decisions to verify/);
  const other = await verifyFile({ evidence }, 'subject.json', '--subject', 'apr_nobody');
  assert.equal(other.code, 4, other.text);
  assert.match(other.text, /no passkey-signed decisions to verify.*apr_nobody/);
  const store = await runCli(dir, ['--json', 'decisions', 'verify', '--subject', 'apr_nobody']);
  assert.equal(store.code, 4, store.stdout + store.stderr);
  assert.match(store.stdout, /no passkey-signed decisions to verify/);
  // The benign neighbours: the export as a whole, one subject of it, and the store.
  const all = await verifyFile({ evidence }, 'all.json');
  assert.equal(all.code, 0, all.text);
  const one = await verifyFile(
    { evidence },
    'one.json',
    '--subject',
    ofKind('review').assertion.subject_id,
  );
  assert.equal(one.code, 0, one.text);
  assert.equal(one.out.checked, 1);
  const whole = await runCli(dir, ['--json', 'decisions', 'verify']);
  assert.equal(whole.code, 0, whole.stdout + whole.stderr);
  assert.equal(JSON.parse(whole.stdout).checked, 3);
});
