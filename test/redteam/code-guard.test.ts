/**
 * Runs every red-team case for the static code guard (C9), one test per case: evasions refused
 * with their rule, benign code allowed. The cases are data: code-cases.json next to this file.
 * Python cases are parsed by the machine's python3, concurrently (each is a child process).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { type CodeLanguage, checkCode, MAX_CODE_CHARS } from '../../src/domain/policy/index.js';

interface CodeCase {
  readonly name: string;
  readonly language: CodeLanguage;
  readonly code: string;
  readonly expect: 'allow' | 'deny';
  readonly rule?: string;
}

const cases = JSON.parse(
  readFileSync(new URL('./code-cases.json', import.meta.url), 'utf8'),
) as CodeCase[];

describe('red team: code arguments', { concurrency: 4 }, () => {
  for (const c of cases) {
    test(c.name, async () => {
      const verdict = await checkCode(c.code, c.language);
      if (c.expect === 'allow') {
        assert.ok(verdict.ok, verdict.ok ? '' : `refused: ${verdict.rule}: ${verdict.message}`);
        return;
      }
      assert.equal(verdict.ok, false, 'allowed, expected a refusal');
      if (!verdict.ok) assert.equal(verdict.rule, c.rule, verdict.message);
    });
  }

  test('the corpus holds evasions and benign code for both languages', () => {
    for (const language of ['javascript', 'python'] as const) {
      const mine = cases.filter((c) => c.language === language);
      assert.ok(mine.filter((c) => c.expect === 'deny').length >= 25, language);
      assert.ok(mine.filter((c) => c.expect === 'allow').length >= 5, language);
    }
  });
});

describe('bounded cost', () => {
  test('code over the size cap is refused unparsed; a non-string is refused', async () => {
    const big = 'x'.repeat(MAX_CODE_CHARS + 1);
    for (const language of ['javascript', 'python'] as const) {
      const verdict = await checkCode(big, language);
      assert.equal(verdict.ok ? '' : verdict.rule, 'code.too_large');
      const typed = await checkCode(42, language);
      assert.equal(typed.ok ? '' : typed.rule, 'code.type');
    }
  });

  test('code that is not well-formed Unicode is refused unchecked; a surrogate pair is fine', async () => {
    for (const language of ['javascript', 'python'] as const) {
      const lone = await checkCode("x = '\ud800'", language);
      assert.equal(lone.ok ? '' : lone.rule, 'code.syntax');
      const pair = await checkCode("x = '\u{1f600}'", language);
      assert.ok(pair.ok, language);
    }
  });

  test('a parse past the timeout, or no interpreter, refuses the code (fail closed)', async () => {
    const slow = await checkCode('x = 1', 'python', { timeoutMs: 1 });
    assert.equal(slow.ok ? '' : slow.rule, 'code.timeout');
    const missing = await checkCode('x = 1', 'python', { python: '/nonexistent/python3' });
    assert.equal(missing.ok ? '' : missing.rule, 'code.parser_unavailable');
  });

  test('deeply nested code is refused, never a crash', async () => {
    const deep = `${'('.repeat(20_000)}1${')'.repeat(20_000)}`;
    for (const language of ['javascript', 'python'] as const) {
      const verdict = await checkCode(deep, language);
      assert.equal(verdict.ok, false, language);
    }
  });
});
