/**
 * ReDoS for the scanner's own rules: every pattern rule (English and per language) runs on the
 * V8 engine, so each is fed texts built to make a backtracking engine stall — long runs of the
 * rules' own vocabulary, separators, brackets, encodings and scripts — at the longest size a
 * definition allows and four times that (a tool result is longer). A pattern with unbounded
 * backtracking takes seconds on these; the bounded ones answer in milliseconds.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { DESCRIPTION_RULES } from '../../src/domain/catalog/description-rules.js';
import { scanModelText } from '../../src/domain/catalog/description-scan.js';

/** Fragments that keep many rules half-matched for as long as the text goes on. */
const FRAGMENTS = [
  'a',
  'a ',
  'you must ',
  'always ',
  'ignore ',
  'ignore all previous ',
  'send the user ',
  'pass the value of ',
  'api_key_secret_token_',
  'call a_b with ',
  'when x_y is ',
  'before every ',
  '### ',
  '=== system ',
  '{{#',
  '{% ',
  '<|',
  '[inst',
  '<',
  '< a ',
  '<a b="',
  '![',
  'https://a.b/',
  'https://a.b/?data=',
  'www.a',
  'x@y.',
  '%41',
  '\\x41',
  'QUFB',
  'deadbeef',
  'i g n o r e ',
  'é ',
  'übergib ',
  'ne dis ',
  'игнорируй ',
  '用户',
  '忽略',
  'ユーザーに',
  '\u200b',
  '. ',
  '\n',
];

const SIZES = [4_096, 16_384];
/** Generous for a loaded shared machine; catastrophic backtracking takes orders of magnitude more. */
const BUDGET_MS = { 4096: 1_000, 16384: 4_000 } as Readonly<Record<number, number>>;

test('every pattern rule compiles and the rule set is non-trivial', () => {
  const patterns = DESCRIPTION_RULES.filter((r) => r.kind === 'pattern');
  assert.ok(patterns.length > 60, `${patterns.length} pattern rules`);
});

for (const size of SIZES) {
  test(`each adversarial text of ${size} characters is scanned within ${BUDGET_MS[size]} ms`, () => {
    // One warm-up so compilation is not charged to the first fragment.
    scanModelText({ text: 'warm up' });
    let slowest = { fragment: '', ms: 0 };
    for (const fragment of FRAGMENTS) {
      const text = fragment.repeat(Math.ceil(size / fragment.length)).slice(0, size);
      const started = performance.now();
      scanModelText({ text });
      const ms = performance.now() - started;
      if (ms > slowest.ms) slowest = { fragment, ms };
    }
    assert.ok(
      slowest.ms < (BUDGET_MS[size] ?? 0),
      `${JSON.stringify(slowest.fragment)} took ${slowest.ms.toFixed(0)} ms`,
    );
  });
}

test('each pattern rule alone stays linear on every fragment (twice the input, not six times the time)', () => {
  for (const rule of DESCRIPTION_RULES) {
    if (rule.kind !== 'pattern') continue;
    const re = new RegExp(rule.pattern, `${(rule.flags ?? 'u').replace('g', '')}g`);
    // The faster of two runs, so a pause of the shared machine is not read as backtracking.
    const run = (text: string): number => {
      let best = Number.POSITIVE_INFINITY;
      for (let k = 0; k < 2; k++) {
        const started = performance.now();
        re.lastIndex = 0;
        // Every match, as the scanner may walk them all (variation-selector runs).
        for (let m = re.exec(text); m !== null; m = re.exec(text)) if (m[0] === '') re.lastIndex++;
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    for (const fragment of FRAGMENTS) {
      // As the scanner sees text: NFKC, lower case, each run of white space collapsed to one.
      const fold = (t: string): string =>
        t
          .normalize('NFKC')
          .toLowerCase()
          .replace(/\s+/gu, (w) => (w.includes('\n') ? '\n' : ' '));
      const small = fold(fragment.repeat(Math.ceil(2_048 / fragment.length)));
      const large = fold(small + small);
      const a = run(small);
      const b = run(large);
      // Absolute floor: sub-10 ms timings are noise on a shared machine.
      assert.ok(
        b < Math.max(25, a * 6),
        `${rule.id} on ${JSON.stringify(fragment)}: ${a.toFixed(1)} ms then ${b.toFixed(1)} ms`,
      );
    }
  }
});
