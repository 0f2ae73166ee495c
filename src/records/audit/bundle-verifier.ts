/**
 * @module Offline check of an export bundle (records.jsonl, checkpoints.jsonl, context.json,
 * public-key.vkey): no database, only node:fs (through core's bounded reader), node:crypto and
 * canonicalize. The public key is
 * taken from the bundle unless the caller passes the one it trusts — pass it: a bundle's own key
 * only proves the bundle is self-consistent.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_SECRET_FILE_BYTES, readBoundedFile } from '../../core/index.js';
import {
  type ChainRow,
  type CheckpointRow,
  LogVerifier,
  type Problem,
  type VerifyReport,
} from './log-verifier.js';
import { MerkleFrontier } from './merkle.js';
import { parseVerifierKey } from './signed-note.js';

export interface BundleReport extends VerifyReport {
  readonly from: number;
  readonly to: number;
  /** Where the trusted key came from. */
  readonly keySource: 'given' | 'bundle';
}

/**
 * The most a bundle's records, checkpoints or context file may hold: a FIFO or device named as
 * the bundle is refused, and nothing is read without end (Node cannot hold a much longer string).
 */
export const MAX_BUNDLE_FILE_BYTES = 256 * 1024 * 1024;

function bundleFile(path: string, maxBytes = MAX_BUNDLE_FILE_BYTES): string {
  return readBoundedFile(path, { option: 'audit bundle file', maxBytes });
}

function jsonLines(path: string): unknown[] {
  return bundleFile(path)
    .split('\n')
    .filter((line) => line !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw new TypeError(`${path}:${i + 1} is not JSON`);
      }
    });
}

interface Context {
  origin: string;
  from: number;
  to: number;
  start: { prev_hash: string; frontier: { size: number; nodes: string[]; levels: number[] } };
  tail_leaves: string[];
}

function readContext(path: string): Context {
  const c = JSON.parse(bundleFile(path)) as Partial<Context> & { format?: unknown };
  if (
    c.format !== 'toolgate-audit-bundle/1' ||
    typeof c.origin !== 'string' ||
    !Number.isInteger(c.from) ||
    !Number.isInteger(c.to) ||
    typeof c.start?.prev_hash !== 'string' ||
    !Array.isArray(c.tail_leaves)
  ) {
    throw new TypeError(`${path} is not a toolgate audit bundle context`);
  }
  return c as Context;
}

/** Throws TypeError on a bundle that cannot be read at all; a readable one gets a report. */
export function verifyBundle(dir: string, options: { key?: string } = {}): BundleReport {
  const context = readContext(join(dir, 'context.json'));
  const keyPath = join(dir, 'public-key.vkey');
  const keyText =
    options.key ?? (existsSync(keyPath) ? bundleFile(keyPath, MAX_SECRET_FILE_BYTES) : undefined);
  if (keyText === undefined)
    throw new TypeError('no public key: pass one, or include public-key.vkey');
  const frontier = MerkleFrontier.fromJSON(context.start.frontier);
  if (frontier.size !== context.from - 1)
    throw new TypeError('context.json: the frontier does not end before `from`');
  const checkpoints = jsonLines(join(dir, 'checkpoints.jsonl')) as CheckpointRow[];
  const verifier = new LogVerifier(
    {
      verifiers: [parseVerifierKey(keyText)],
      origin: context.origin,
      start: { frontier, prevHash: context.start.prev_hash },
    },
    checkpoints,
  );
  for (const row of jsonLines(join(dir, 'records.jsonl'))) verifier.push(row as ChainRow);
  const last = verifier.lastSeq ?? context.from - 1;
  const short: Problem[] = [];
  if (last < context.to) {
    short.push({
      kind: 'record_missing',
      seq: last + 1,
      message: `the bundle says it holds records ${context.from}..${context.to} but ends at ${last}`,
    });
  } else {
    // The tail leaves extend the tree from `to` to the checkpoint that covers it.
    for (const leaf of context.tail_leaves) verifier.pushLeaf(String(leaf));
  }
  const final = verifier.finish();
  const problems = [...short, ...final.problems].sort(
    (a, b) => (a.seq ?? Number.MAX_SAFE_INTEGER) - (b.seq ?? Number.MAX_SAFE_INTEGER),
  );
  return {
    ...final,
    ok: problems.length === 0,
    problems,
    firstProblem: problems[0] ?? null,
    from: context.from,
    to: context.to,
    keySource: options.key !== undefined ? 'given' : 'bundle',
  };
}
