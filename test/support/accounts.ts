/** @module Operator accounts set up over REST, one step after another, as a suite's `call` sends. */
import assert from 'node:assert/strict';

/** A REST call as account `by` (the suite maps `by` to a bearer). */
type Call = (
  by: string,
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

/**
 * The set-up steps of a suite whose accounts' tokens and factor secrets are kept in `tokens` and
 * `secrets`; every step asserts its 201.
 */
export function accountSteps(
  call: Call,
  tokens: Record<string, string>,
  secrets: Record<string, string>,
) {
  const ok = (r: { status: number; body: unknown }, status: number) =>
    assert.equal(r.status, status, JSON.stringify(r.body));
  return {
    /** Creates `id` as `by` and issues its token; `arm` enrols its factor too, as `by`. */
    async setUp(by: string, id: string, roles: string[], arm: boolean): Promise<void> {
      ok(await call(by, 'POST', '/v1/operators', { id, roles }), 201);
      const issued = await call(by, 'POST', `/v1/operators/${id}/tokens`, {
        name: 'laptop',
        expires_in_days: 30,
      });
      ok(issued, 201);
      tokens[id] = String(issued.body.token);
      if (!arm) return;
      const enrolled = await call(by, 'POST', `/v1/operators/${id}/second-factor`, {});
      ok(enrolled, 201);
      secrets[id] = String(enrolled.body.secret);
    },
    /** `id` enrols a factor of their own with none enrolled (no code asked). */
    async enrolOwn(id: string): Promise<void> {
      const first = await call(id, 'POST', `/v1/operators/${id}/second-factor`, {});
      ok(first, 201);
      secrets[id] = String(first.body.secret);
    },
  };
}
