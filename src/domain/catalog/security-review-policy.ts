/**
 * @module Which tool definitions need a security review before they may go live (C1), and which
 * an owner may register for their own team without one. One table of data, read by registration,
 * activation, the review desk and the capability register alike (docs/architecture.md §8).
 */
import type { ToolDefinition } from './tool-definition.js';

/** Why a definition needs a review; several may hold at once. */
export type ReviewReason =
  | 'restricted'
  | 'privileged'
  | 'third_party'
  | 'oss'
  | 'upstream'
  /** An owner's self-registration that other teams' agents would be offered (owner-reach.ts). */
  | 'other_teams';

type Reviewed = Pick<ToolDefinition, 'access_tier' | 'provenance' | 'runtime'>;

/**
 * A definition needs a review when any row matches. Third-party means code toolgate's operators
 * did not write: a stated provenance other than `internal`, or any tool run by an upstream MCP
 * provider (`runtime.kind: mcp`), whatever provenance its definition claims — a provider import
 * is someone else's server even when a first-party team classified it.
 */
export const REVIEW_RULES: readonly {
  readonly reason: ReviewReason;
  readonly applies: (def: Reviewed) => boolean;
}[] = [
  { reason: 'restricted', applies: (d) => d.access_tier === 'restricted' },
  { reason: 'privileged', applies: (d) => d.access_tier === 'privileged' },
  { reason: 'third_party', applies: (d) => d.provenance === 'third_party' },
  { reason: 'oss', applies: (d) => d.provenance === 'oss' },
  { reason: 'upstream', applies: (d) => d.runtime.kind === 'mcp' },
];

/** Every reason this definition needs a review; empty when it may go live on its checks alone. */
export function reviewReasons(def: Reviewed): ReviewReason[] {
  return REVIEW_RULES.filter((r) => r.applies(def)).map((r) => r.reason);
}

export function needsReview(def: Reviewed): boolean {
  return REVIEW_RULES.some((r) => r.applies(def));
}

/**
 * What an `owner` operator may register on their own: a public, read-only, first-party tool of
 * one of their teams. Such a tool never needs a review (it matches no REVIEW_RULES row), so it
 * goes live on the automatic checks. Anything else an owner sends is refused, not parked as a
 * draft: an owner's queue of drafts would let them fill the reviewers' inbox with tools they may
 * not register, and the refusal tells them at once to ask an admin.
 */
export function selfRegistrable(
  def: Pick<ToolDefinition, 'access_tier' | 'provenance' | 'runtime' | 'action_class'>,
): boolean {
  return def.action_class === 'read' && !needsReview(def);
}
