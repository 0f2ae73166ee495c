/**
 * The names a person reads beside an id follow the operator display-name rule (attack round 14,
 * Q3): an Agent's and a User's `display_name` and a personal token's name hold no bidi override or
 * isolate, zero-width or default-ignorable character, control, separator, private-use or
 * noncharacter code point, and at least one visible character. An Agent's `description` is free
 * text over several lines: newline and tab are allowed, the other invisible or reordering
 * characters are not. Refused before anything is written (config apply: CONFIG_INVALID with a
 * problem on the field; a token: INPUT_INVALID on `/name`). And in depth: the CLI's text tables
 * show a control character in a cell as an escape, so a name stored before cannot forge a row, and
 * the console's Agents and Users pages show bidi and zero-width characters as escapes. The benign
 * neighbours: names in any script, with accents, apostrophes and emoji; descriptions over lines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { table } from '../../src/edge/cli/output.js';
import { operator, render } from '../console-pages/console-harness.js';
import { openWorld, type World } from '../support/world.js';

/** Names that render as something else, or as nothing. */
const UNPRINTABLE_NAMES: Record<string, string> = {
  'right-to-left override': 'support\u202e tcejer-ot-si-siht bot',
  'left-to-right isolate': 'Al\u2066ice\u2069',
  'zero-width space': 'Alice\u200b',
  'Hangul filler (blank)': '\u3164',
  'tag character': 'Alice\u{e0041}',
  'bell control': 'Alice\u0007',
  newline: 'Ev\nil',
  'private use': 'Alice\ue000',
  noncharacter: 'Alice\uffff',
  'padded with a space': ' Alice',
};

/** Names people have. */
const PRINTABLE_NAMES = ['Ålice Ünal', '李雷', "Zoë O'Brien-Smith", 'مريم', 'Alice 🚀'];

/** Descriptions that hide or reorder what a reader sees. */
const UNPRINTABLE_DESCRIPTIONS: Record<string, string> = {
  'right-to-left override': 'Refunds \u202eorders',
  'first-strong isolate': 'Refunds \u2068orders\u2069',
  'zero-width space': 'Refunds\u200b orders',
  'soft hyphen': 'Re\u00adfunds',
  'Hangul filler': 'Refunds \u3164',
  'tag character': 'Refunds\u{e0041}',
  'bell control': 'Refunds\u0007',
  'carriage return': 'Refunds\rorders',
  'C1 control (NEL)': 'Refunds\u0085orders',
  'line separator': 'Refunds\u2028orders',
  'private use': 'Refunds\ue000',
  noncharacter: 'Refunds\ufdd0',
};

const PRINTABLE_DESCRIPTIONS = [
  'Refunds orders.\nAsks an approver above 100 €.\n\tSee the runbook.',
  "Rembourse les commandes d'un client (ü, ß, 李, مريم) 🚀",
];

/** The first problem of a refused request. */
function firstProblem(body: Record<string, unknown>): { pointer?: string; rule?: string } {
  const problems = (body.details as { problems?: { pointer: string; rule: string }[] } | undefined)
    ?.problems;
  return problems?.[0] ?? {};
}

describe('display names, descriptions and token names are printable (attack round 14, Q3)', () => {
  let w: World;
  before(async () => {
    w = await openWorld({ rest: true, inspector: true });
    const made = await w.send('POST', '/v1/operators', { id: 'aud', roles: ['auditor'] });
    assert.equal(made.status, 201, made.text);
  });
  after(async () => {
    await w?.close();
  });

  test('an Agent or User display name that is not printable is refused; nothing applied', async () => {
    for (const [what, name] of Object.entries(UNPRINTABLE_NAMES)) {
      const agent = await w.send('POST', '/v1/apply', [
        { kind: 'Agent', spec: { id: 'mal-bot', owner: 'qa', display_name: name } },
      ]);
      assert.equal(agent.status, 422, `agent, ${what}: ${agent.text}`);
      assert.equal(agent.body.code, 'CONFIG_INVALID');
      assert.deepEqual(firstProblem(agent.body), {
        ...firstProblem(agent.body),
        pointer: '/0/spec/display_name',
        rule: 'name.printable',
      });
      const user = await w.send('POST', '/v1/apply', [
        { kind: 'User', spec: { id: 'mal', display_name: name, permissions: [] } },
      ]);
      assert.equal(user.status, 422, `user, ${what}: ${user.text}`);
      assert.equal(firstProblem(user.body).pointer, '/0/spec/display_name', what);
      assert.equal(firstProblem(user.body).rule, 'name.printable', what);
    }
    assert.equal((await w.send('GET', '/v1/agents/mal-bot')).status, 404, 'no agent');
    assert.equal((await w.tg.admin.users.list()).length, 0, 'no user');
  });

  test('benign: display names in any script, accents, apostrophes and emoji are kept', async () => {
    for (const [i, name] of PRINTABLE_NAMES.entries()) {
      await w.tg.config.apply(
        [
          { kind: 'Agent', spec: { id: `bot-${i}`, owner: 'qa', display_name: name } },
          { kind: 'User', spec: { id: `user${i}`, display_name: name, permissions: [] } },
        ],
        w.admin,
      );
      assert.equal((await w.send('GET', `/v1/agents/bot-${i}`)).body.display_name, name);
      assert.equal((await w.tg.admin.users.get(`user${i}`)).display_name, name);
    }
  });

  test('an Agent description may hold lines and tabs, never invisible or reordering characters', async () => {
    for (const [what, description] of Object.entries(UNPRINTABLE_DESCRIPTIONS)) {
      const r = await w.send('POST', '/v1/apply', [
        { kind: 'Agent', spec: { id: 'mal-bot', owner: 'qa', description } },
      ]);
      assert.equal(r.status, 422, `${what}: ${r.text}`);
      assert.equal(firstProblem(r.body).pointer, '/0/spec/description', what);
      assert.equal(firstProblem(r.body).rule, 'text.printable', what);
    }
    assert.equal((await w.send('GET', '/v1/agents/mal-bot')).status, 404, 'no agent');
    for (const [i, description] of PRINTABLE_DESCRIPTIONS.entries()) {
      const r = await w.send('POST', '/v1/apply', [
        { kind: 'Agent', spec: { id: `described-${i}`, owner: 'qa', description } },
      ]);
      assert.equal(r.status, 200, r.text);
      assert.equal(
        (await w.send('GET', `/v1/agents/described-${i}`)).body.description,
        description,
      );
    }
  });

  test('a token name that is not printable is refused, the forged-row newline among them', async () => {
    const forged = 'laptop\notk_AAAAAAAAAAAAAAAA  backup  admin    2099-01-01T00:00:00.000Z  -';
    const { 'padded with a space': _trimmed, ...refused } = UNPRINTABLE_NAMES;
    for (const [what, name] of Object.entries({ ...refused, forged })) {
      const r = await w.send('POST', '/v1/operators/aud/tokens', { name, expires_in_days: 30 });
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.equal(r.body.code, 'INPUT_INVALID');
      assert.equal(firstProblem(r.body).pointer, '/name', what);
      assert.equal(firstProblem(r.body).rule, 'name.printable', what);
    }
    assert.equal((await w.tg.admin.operators.tokens('aud')).length, 0, 'no token issued');
    for (const name of [...PRINTABLE_NAMES, 'laptop (home)']) {
      const r = await w.send('POST', '/v1/operators/aud/tokens', { name, expires_in_days: 30 });
      assert.equal(r.status, 201, `${name}: ${r.text}`);
    }
    const names = (await w.tg.admin.operators.tokens('aud')).map((t) => t.name).sort();
    assert.deepEqual(names, [...PRINTABLE_NAMES, 'laptop (home)'].sort());
  });

  test('the CLI text table shows control and format characters in a cell as escapes', () => {
    const text = table([
      ['ID', 'NAME', 'ROLES'],
      ['otk_1', 'laptop\notk_AAAA  backup  admin', 'approver'],
      ['otk_2', 'a\rb\tc\u0007d\u202ee\u200bf\u{e0041}', 'auditor'],
      ['otk_3', 'Zoë 🚀 李雷', 'auditor'],
    ]);
    const lines = text.split('\n');
    assert.equal(lines.length, 4, text);
    assert.match(lines[1] ?? '', /^otk_1 {2}laptop\\notk_AAAA {2}backup {2}admin +approver$/);
    assert.ok(lines[2]?.includes('a\\rb\\tc\\u0007d\\u202Ee\\u200Bf\\u{E0041}'), lines[2]);
    assert.ok(lines[3]?.includes('Zoë 🚀 李雷'), 'printable text is as given');
  });

  test('the console Agents and Users pages show a stored bidi or zero-width name as escapes', async () => {
    // Rows written before the rule: put in place directly.
    const db = w.inspector?.db;
    assert.ok(db);
    await db
      .updateTable('agents')
      .set({ display_name: 'support\u202ebot', description: 'Refunds\u200b orders' })
      .where('id', '=', 'bot-0')
      .execute();
    await db
      .updateTable('users')
      .set({ display_name: 'Admin\u202e\u3164' })
      .where('id', '=', 'user0')
      .execute();
    const audrey = operator('audrey', ['auditor']);
    const agents = await render(w.tg.admin, audrey, '/agents');
    assert.ok(agents.includes('<td>support\\u202Ebot</td>'), 'name escaped');
    assert.ok(agents.includes('<td>Refunds\\u200B orders</td>'), 'description escaped');
    assert.ok(!/[\u202e\u200b]/.test(agents), 'nothing raw');
    const users = await render(w.tg.admin, audrey, '/users');
    assert.ok(users.includes('<td>Admin\\u202E\\u3164</td>'), 'user name escaped');
    assert.ok(!/[\u202e\u3164]/.test(users), 'nothing raw');
  });
});
