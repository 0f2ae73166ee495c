/**
 * The library's admin `actor` is what the host process says, recorded as given — but bounded
 * and printable (attack round 10, F7): an id past 200 characters, or holding a NUL, a newline or
 * another control character, is INPUT_INVALID and nothing is written, beside the benign
 * neighbours (a named library caller, an id of exactly 200 characters) that are recorded.
 * Round 11, F7: bidi overrides, zero-width and other format characters, lone surrogates, private
 * use and blank or space-padded ids are refused too, and the bound counts code points (200 emoji
 * are accepted), beside ids with accented letters or an emoji.
 * Round 12, N4: unassigned code points (Cn), noncharacters, default-ignorable code points (a
 * Hangul filler, a trailing variation selector) and ids with no visible base character (braille
 * blanks, combining marks alone) are refused too, beside CJK, accented and emoji ids.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { openWorld, type World } from '../support/world.js';

let world: World;
const agent = (id: string) => [{ kind: 'Agent', spec: { id, owner: 'qa' } }];
const count = async () => (await world.tg.admin.events.list({ limit: 100_000 })).length;

before(async () => {
  world = await openWorld();
});
after(() => world.close());

test('an unbounded or unprintable actor id is refused and writes nothing', async () => {
  for (const id of [
    'x'.repeat(100_000),
    'x'.repeat(201),
    'a\nb',
    'a\u0000c',
    'a\u001bb',
    'a\u2028b',
    // Attack round 11, F7: format characters, blank ids, lone surrogates and private use.
    'library:\u202eevil',
    'library:\u200bops',
    'library:\ufeffops',
    'a\u2029b',
    'a\ud800b',
    'a\udc00',
    'a\ue000b',
    '   ',
    ' library:ops',
    'library:ops\t',
    'library:ops ',
    '😀'.repeat(201),
    // Attack round 12, N4: blank-looking, combining-only, unassigned, noncharacter, ignorable.
    '\u2800\u2800',
    '\u3164',
    'library:\u3164',
    '\u0301\u0301',
    'a\u0378b',
    'a\uffffb',
    'a\ufdd0b',
    'a\u{10ffff}b',
    'library:ops\ufe0f',
    'a\u034fb',
    '\u2800\u0301',
  ]) {
    const before = await count();
    await assert.rejects(
      world.tg.config.apply(agent('bot-x'), { id, via: 'library' } as Actor),
      (err: { code?: string }) => err.code === 'INPUT_INVALID',
      JSON.stringify(id.slice(0, 20)),
    );
    assert.equal(await count(), before, 'nothing written');
  }
});

test('a named library caller, and an id of 200 characters, are recorded as given', async () => {
  for (const [i, id] of [
    'library:ops',
    'y'.repeat(200),
    'library:José Müller',
    'library:ops 😀',
    '😀'.repeat(200),
    // Round 12, N4's benign neighbours: CJK, an accented letter as base + combining mark, a
    // braille pattern that is not blank, one visible character beside a braille blank.
    'library:運用チーム',
    'library:Jose\u0301',
    'library:\u2801',
    'library:\u2800ops',
  ].entries()) {
    await world.tg.config.apply(agent(`bot-${i}`), { id, via: 'library' });
    const events = await world.tg.admin.events.list({ limit: 100_000 });
    assert.equal(events.at(-1)?.actor, id);
  }
});
