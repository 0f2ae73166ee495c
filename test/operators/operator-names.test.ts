/**
 * An operator's display name is what a person reads beside the account's id (listings, `operators
 * show`, the console) and is recorded raw in the signed log, so it follows the actor-id rule (attack
 * round 13, P2): no bidi override or isolate, zero-width or default-ignorable character, control,
 * separator, private-use or noncharacter code point, and at least one visible character. Refused
 * as INPUT_INVALID on `/name` when an account is created or renamed, nothing written; a single
 * sign-on account whose provider sends such a name is named by its id instead. The benign
 * neighbours: names in any script, with accents, apostrophes, hyphens and emoji.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { oidcOperatorId } from '../../src/domain/operators/index.js';
import { openWorld, type World } from '../support/world.js';

/** Names that render as something else, or as nothing. */
const UNPRINTABLE_NAMES: Record<string, string> = {
  'right-to-left override': 'Al\u202eice',
  'first-strong isolate': 'Al\u2068ice',
  'zero-width space': 'Alice\u200b',
  'zero-width joiner alone': '\u200d',
  'byte order mark': '\ufeffAlice',
  'Hangul filler (blank)': '\u3164',
  'braille blank': '\u2800',
  'combining mark alone': '\u0301',
  'variation selector': 'Alice\ufe0f',
  'line separator': 'Ali\u2028ce',
  'bell control': 'Alice\u0007',
  'private use': 'Alice\ue000',
  noncharacter: 'Alice\uffff',
};

/** Names people have. */
const PRINTABLE_NAMES = [
  'Ålice Ünal',
  '李雷',
  "Zoë O'Brien-Smith",
  'مريم',
  'Alice 🚀',
  'Anne\u0301',
];

describe('operator display names are printable (attack round 13, P2)', () => {
  let w: World;
  before(async () => {
    w = await openWorld({ rest: true });
    const made = await w.send('POST', '/v1/operators', { id: 'aud', roles: ['auditor'] });
    assert.equal(made.status, 201, made.text);
  });
  after(async () => {
    await w?.close();
  });

  test('an unprintable name is refused on create and on rename; nothing is written', async () => {
    const before = (await w.tg.events.list({ limit: 1000 })).length;
    for (const [what, name] of Object.entries(UNPRINTABLE_NAMES)) {
      const created = await w.send('POST', '/v1/operators', {
        id: 'mal',
        roles: ['auditor'],
        name,
      });
      assert.equal(created.status, 400, `${what}: ${created.text}`);
      assert.equal(created.body.code, 'INPUT_INVALID');
      const { problems } = created.body.details as { problems: { pointer: string }[] };
      assert.equal(problems[0]?.pointer, '/name', what);
      const renamed = await w.send('PATCH', '/v1/operators/aud', { name });
      assert.equal(renamed.status, 400, `${what}: ${renamed.text}`);
      assert.equal(renamed.body.code, 'INPUT_INVALID');
    }
    assert.equal((await w.send('GET', '/v1/operators/mal')).status, 404, 'nobody was created');
    assert.equal((await w.tg.admin.operators.get('aud')).name, 'aud', 'the name is unchanged');
    assert.equal((await w.tg.events.list({ limit: 1000 })).length, before, 'nothing recorded');
  });

  test('benign: names in any script, accents, apostrophes, hyphens and emoji are kept as given', async () => {
    for (const [i, name] of PRINTABLE_NAMES.entries()) {
      const created = await w.send('POST', '/v1/operators', {
        id: `person${i}`,
        roles: ['auditor'],
        name,
      });
      assert.equal(created.status, 201, `${name}: ${created.text}`);
      assert.equal(created.body.name, name);
      const renamed = await w.send('PATCH', '/v1/operators/aud', { name });
      assert.equal(renamed.status, 200, `${name}: ${renamed.text}`);
      assert.equal((await w.tg.admin.operators.get('aud')).name, name);
    }
  });

  test('single sign-on: a provider name that is not printable gives way to the account id', async () => {
    const identity = {
      issuer: 'https://idp.example.test',
      subject: 'user-7',
      name: 'Ev\u202ee',
      roles: ['auditor' as const],
      teams: [],
    };
    const id = oidcOperatorId(identity.issuer, identity.subject);
    const first = await w.tg.admin.operators.fromOidc(identity);
    assert.equal(first.name, id);
    assert.equal((await w.tg.admin.operators.get(id)).name, id);
    // Benign: a printable provider name is the account's name.
    const again = await w.tg.admin.operators.fromOidc({ ...identity, name: 'Eve Ödegaard' });
    assert.equal(again.name, 'Eve Ödegaard');
  });
});
