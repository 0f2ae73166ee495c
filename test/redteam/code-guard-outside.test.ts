/**
 * A held-out corpus for the static code guard (C9, docs/security-model.md "The static code
 * guard"): written from the guard's documented contract by someone who did not write the guard's
 * rules, so it tests the rule families (reflective access, computed names, re-exported modules)
 * rather than the cases the guard was tuned on. Only the verdict is asserted, never the rule name:
 * any refusal of an evasion is right, any refusal of the benign neighbour is wrong.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { type CodeLanguage, checkCode } from '../../src/domain/policy/index.js';

interface OutsideCase {
  readonly name: string;
  readonly language: CodeLanguage;
  readonly code: string;
  readonly expect: 'allow' | 'deny';
}

const cases = JSON.parse(
  readFileSync(new URL('./code-cases-outside.json', import.meta.url), 'utf8'),
) as OutsideCase[];

describe('red team, held out: code arguments', { concurrency: 4 }, () => {
  for (const c of cases) {
    test(c.name, async () => {
      const verdict = await checkCode(c.code, c.language);
      if (c.expect === 'allow') {
        assert.ok(verdict.ok, verdict.ok ? '' : `refused: ${verdict.rule}: ${verdict.message}`);
      } else {
        assert.equal(verdict.ok, false, 'allowed, expected a refusal');
      }
    });
  }

  test('every evasion family has a benign neighbour in the same language', () => {
    for (const language of ['javascript', 'python'] as const) {
      const mine = cases.filter((c) => c.language === language);
      assert.ok(mine.filter((c) => c.expect === 'deny').length >= 30, language);
      assert.ok(mine.filter((c) => c.expect === 'allow').length >= 10, language);
    }
  });
});
