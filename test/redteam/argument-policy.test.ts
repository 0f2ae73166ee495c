/**
 * Runs every red-team case for the argument policy (C6), one test per case. The cases
 * are data: url-cases.json and path-cases.json next to this file.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkPath, checkUrl, type PolicyVerdict } from '../../src/domain/policy/index.js';
import { makePathWorkspace } from '../support/path-workspace.js';

interface UrlCase {
  readonly name: string;
  readonly url: string;
  readonly hosts: readonly string[];
  readonly expect: 'allow' | 'deny';
  readonly rule?: string;
  /** What the tool receives for an allowed URL, when the case pins it. */
  readonly normalised?: string;
}

interface PathCase {
  readonly name: string;
  readonly path: unknown;
  readonly expect: 'allow' | 'deny';
  readonly rule?: string;
}

function load<T>(file: string): T[] {
  return JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as T[];
}

function assertVerdict(
  verdict: PolicyVerdict<unknown>,
  expected: { expect: 'allow' | 'deny'; rule?: string },
): void {
  if (expected.expect === 'allow') {
    assert.ok(verdict.ok, verdict.ok ? '' : `refused: ${verdict.rule}: ${verdict.message}`);
    return;
  }
  assert.equal(verdict.ok, false, 'allowed, expected a refusal');
  if (!verdict.ok && expected.rule !== undefined) {
    assert.equal(verdict.rule, expected.rule, verdict.message);
  }
}

const urlCases = load<UrlCase>('./url-cases.json');
const pathCases = load<PathCase>('./path-cases.json');

describe('red team: URL arguments', () => {
  for (const c of urlCases) {
    test(c.name, () => {
      const verdict = checkUrl(c.url, { hosts: c.hosts });
      assertVerdict(verdict, c);
      if (verdict.ok) {
        assert.ok(c.hosts.includes(verdict.value.host));
        if (c.normalised !== undefined) assert.equal(verdict.value.url, c.normalised);
      }
    });
  }
});

/**
 * The fixture every path case refers to:
 *
 * <base>/ws                                the one root
 *   docs/readme.md
 *   docs/sub/deep.txt
 *   docs/link-out      -> /etc
 *   docs/link-in       -> ../docs
 *   docs/link-root     -> ..               (the root itself)
 *   docs/link-file     -> readme.md
 *   docs/link-evil     -> ../../ws-evil
 *   docs/link-abs-out  -> <base>/ws-evil   (absolute)
 *   docs/link-parent   -> ../..            (<base>)
 *   docs/link-chain    -> link-out
 *   docs/link-passwd   -> /etc/passwd
 *   docs/dangling      -> <base>/nowhere/file
 *   docs/loop          -> loop
 * <base>/ws-evil/secret.txt                a sibling whose name has the root's as prefix
 *
 * A case path starting with `<root>` is absolute: `<root>` stands for <base>/ws.
 */
describe('red team: path arguments', () => {
  let base = '';
  let root = '';

  before(async () => {
    base = await makePathWorkspace('toolgate-redteam-');
    root = path.join(base, 'ws');
  });

  after(async () => {
    if (base !== '')
      await rm(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  for (const c of pathCases) {
    test(c.name, async () => {
      const raw =
        typeof c.path === 'string' && c.path.startsWith('<root>')
          ? root + c.path.slice('<root>'.length)
          : c.path;
      const verdict = await checkPath(raw, { roots: [root] });
      assertVerdict(verdict, c);
      if (verdict.ok) {
        const relative = path.relative(root, verdict.value.path);
        const outside = relative === '..' || relative.startsWith(`..${path.sep}`);
        assert.ok(!outside && !path.isAbsolute(relative), verdict.value.path);
        assert.equal(verdict.value.root, root);
      }
    });
  }
});
