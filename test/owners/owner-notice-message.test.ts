/**
 * @module An owner notice's Slack-compatible message (docs/architecture.md §8): facts a health
 * monitor passes on cannot mention everyone, smuggle a link or break out of a code span; facts are
 * bounded; a plain fact is shown as it is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ownerNoticeMessage } from '../../src/operations/owners/index.js';
import { boundFacts } from '../../src/operations/owners/owner-notice.js';

test('Slack control text in a fact is escaped; a plain fact passes unchanged', () => {
  const facts = boundFacts({
    state: 'unavailable',
    upstream: '<!channel> <https://evil.example|click> `x`',
  });
  const m = ownerNoticeMessage(
    { kind: 'unhealthy', tool_id: 'lookup_invoice', version: '1.0.0' },
    'billing-team',
    facts,
    'https://toolgate.example.com/',
  );
  const body = m.blocks[0].text.text;
  assert.ok(!body.includes('<!channel>'));
  assert.ok(!body.includes('<https://evil.example'));
  assert.ok(body.includes('&lt;!channel&gt;'));
  assert.ok(body.includes('*state* `unavailable`'));
  assert.ok(
    body.endsWith(
      '<https://toolgate.example.com/console/catalog/lookup_invoice|Open in the console>',
    ),
  );
  assert.equal(m.text, 'Tool unhealthy: lookup_invoice@1.0.0 (unavailable)');
});

test('facts are bounded: 16 keys, 200 characters, 20 items, scalars only', () => {
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
  assert.equal(Object.keys(boundFacts(many)).length, 16);
  const b = boundFacts({
    long: 'x'.repeat(5_000),
    list: Array.from({ length: 100 }, (_, i) => i),
    nested: { a: 1 } as unknown as string,
  });
  assert.equal((b.long as string).length, 200);
  assert.equal((b.list as number[]).length, 20);
  assert.equal(b.nested, null);
});
