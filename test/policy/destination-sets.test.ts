/**
 * Live destination sets on a real SQLite store: a directory that fails keeps the members it last
 * gave and is asked at most once per miss interval (never once per call); its bad members are
 * left out, never guessed at; a directory set takes no admin edits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { DestinationSets } from '../../src/domain/policy/index.js';
import { openStore } from '../../src/records/store/index.js';

const admin: Actor = { id: 'sets-admin', via: 'library' };

test('a failing directory keeps its last members and is not called on every miss', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    let now = Date.parse('2026-06-01T10:00:00Z');
    let calls = 0;
    let fail = false;
    const sets = new DestinationSets(
      store.db,
      () => new Date(now),
      async () => {
        calls += 1;
        if (fail) throw new Error('directory down');
        return { members: ['Ana@Example.com', 'a@b@example.com', 7] };
      },
    );
    await sets.create(
      {
        name: 'staff',
        kind: 'email',
        directory: { tool: 'dir', version: '1.0.0', members: '/members', refresh_seconds: 60 },
      },
      admin,
    );
    assert.equal(await sets.admits('staff', 'ana@example.com'), 'yes');
    assert.equal(calls, 1);
    assert.deepEqual(await sets.members('staff'), ['ana@example.com'], 'bad members left out');
    fail = true;
    now += 61_000; // due for a refresh, which fails
    assert.equal(await sets.admits('staff', 'ana@example.com'), 'yes', 'last answer kept');
    assert.equal(calls, 2);
    for (let i = 0; i < 5; i += 1) {
      assert.equal(await sets.admits('staff', 'eve@evil.example'), 'no');
    }
    assert.equal(calls, 2, 'no call per miss within the miss interval');
    await assert.rejects(sets.refresh('staff'), { code: 'DESTINATION_SET_UNAVAILABLE' });
    await assert.rejects(sets.add('staff', ['x@example.com'], admin), { code: 'INPUT_INVALID' });
    assert.equal(await sets.admits('nope', 'ana@example.com'), 'missing');
  } finally {
    await store.close();
  }
});
