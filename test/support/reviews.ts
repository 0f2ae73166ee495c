/**
 * @module Security reviews in tests: an approver operator (as the REST auth hook would set it
 * after authenticating) and helpers that record an approved review of a version, or of every
 * draft waiting for one, so suites about something else start from live tools.
 */
import assert from 'node:assert/strict';
import type { AdminApi } from '../../src/api/index.js';
import type { ReviewResult } from '../../src/domain/catalog/index.js';
import type { Operator } from '../../src/domain/operators/index.js';
import { validTool } from './tools.js';

/** An approver in no team, so it may review any team's tool. */
export const REVIEWER: Operator = Object.freeze({
  id: 'reviewer',
  name: 'Test Reviewer',
  roles: Object.freeze(['approver'] as const),
  teams: Object.freeze([] as string[]),
  authenticatedBy: 'password+totp',
});

type Reviewing = { readonly catalog: Pick<AdminApi['catalog'], 'get' | 'review'> };
type Queue = Reviewing & { readonly reviews: Pick<AdminApi['reviews'], 'page'> };

/** Approves the security review of one version's stored definition (it goes live if asked to). */
export async function approveReview(
  tg: Reviewing,
  toolId: string,
  version: string,
  reviewer: Operator = REVIEWER,
): Promise<ReviewResult> {
  const { definition_hash } = await tg.catalog.get(toolId, version);
  return tg.catalog.review(toolId, version, reviewer, {
    definition_hash,
    decision: 'approved',
    notes: 'reviewed in test setup',
  });
}

/** Approves every pending security review; returns what each did. */
export async function approvePendingReviews(
  tg: Queue,
  reviewer: Operator = REVIEWER,
): Promise<ReviewResult[]> {
  const done: ReviewResult[] = [];
  for (;;) {
    const page = await tg.reviews.page('pending', { limit: 500 });
    if (page.items.length === 0) return done;
    for (const r of page.items) done.push(await approveReview(tg, r.tool_id, r.version, reviewer));
  }
}

type Classifying = Reviewing & {
  readonly providers: Pick<AdminApi['providers'], 'classify'>;
};

/**
 * Classifies an imported tool and approves its security review (an imported tool is third-party
 * code: a draft until reviewed); returns the classification's result with the reviewed tool.
 */
export async function classifyReviewed(
  tg: Classifying,
  ...args: Parameters<AdminApi['providers']['classify']>
): Promise<Awaited<ReturnType<AdminApi['providers']['classify']>>> {
  const classified = await tg.providers.classify(...args);
  const reviewed = await approveReview(tg, classified.tool.id, classified.tool.version);
  return {
    ...classified,
    tool: reviewed.tool,
    ...(reviewed.changeId !== undefined ? { changeId: reviewed.changeId } : {}),
  };
}

type Send = (
  method: string,
  path: string,
  body?: unknown,
  token?: string | null,
) => Promise<{ status: number; body: Record<string, unknown> }>;

/**
 * Registers team-y's restricted `tool` 1.0.0 over REST as `token` (the admin token if none): a
 * draft waiting for its review. Returns its definition hash.
 */
export async function registerRestricted(
  send: Send,
  tool: string,
  token?: string,
): Promise<string> {
  const registered = await send(
    'POST',
    '/v1/tools',
    validTool({
      id: tool,
      name: tool,
      owner: 'team-y',
      access_tier: 'restricted',
      required_capabilities: [`${tool}:read`],
    }),
    token,
  );
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  return String((registered.body.tool as { definition_hash: string }).definition_hash);
}
