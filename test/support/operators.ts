/**
 * Operators for tests: plain Operator values, what the REST hook or the console sets after
 * authenticating a credential, and their second factors enrolled through the admin API.
 */
import { join } from 'node:path';
import type { AdminApi } from '../../src/api/index.js';
import { type ApprovalView, totpAt } from '../../src/approvals/index.js';
import { approvalSigner } from '../../src/cli/runtime-files.js';
import { ERROR_CODES, isToolgateError } from '../../src/core/index.js';
import { loadMasterKey } from '../../src/credentials/index.js';
import { BOOTSTRAP_OPERATOR, type Operator, type OperatorRole } from '../../src/operators/index.js';
import { openToolgate } from '../../src/toolgate.js';

export function operator(id: string, roles: readonly OperatorRole[] = ['approver']): Operator {
  return { id, name: id, roles, teams: [], authenticatedBy: 'personal-token' };
}

/**
 * Enrols `op`'s second factor as the bootstrap admin (creating its operator account first when it
 * has none: second factors belong to accounts); returns a code source for it.
 */
export async function enrol(
  admin: Pick<AdminApi, 'secondFactor' | 'operators'>,
  op: Operator | string,
): Promise<{ secret: string; code: (at: Date) => string }> {
  const id = typeof op === 'string' ? op : op.id;
  const roles = typeof op === 'string' ? (['approver'] as const) : op.roles;
  try {
    await admin.operators.create(BOOTSTRAP_OPERATOR, { id, roles: [...roles] });
  } catch (err) {
    if (!isToolgateError(err) || err.code !== 'OPERATOR_EXISTS') throw err;
  }
  const { secret } = await admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, id);
  return { secret, code: (at) => totpAt(secret, at) };
}

/**
 * Decides an approval on a CLI data folder's database as `op`, through the admin API of a gateway
 * opened on the same database and approval key, as the operator CLI will once it authenticates
 * operators (the bootstrap operator the CLI runs as today may not approve).
 */
export async function approveInFolder(
  dir: string,
  approvalId: string,
  op: Operator = operator('e2e-approver'),
): Promise<ApprovalView> {
  const dataDir = join(dir, 'data');
  const tg = await openToolgate({
    db: `sqlite:${join(dir, 'tg.db')}`,
    approvalSigner: () => approvalSigner(dataDir),
    masterKey: () => loadMasterKey({ dataDir }),
    audit: { checkpoints: false },
    detectors: false,
  });
  try {
    return await tg.admin.approvals.approve(approvalId, op);
  } finally {
    await tg.close();
  }
}

/** What REST would answer for a decision made through the admin API: status and JSON body. */
export async function asReply<T>(
  decide: () => Promise<T>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    return { status: 200, body: (await decide()) as Record<string, unknown> };
  } catch (err) {
    if (!isToolgateError(err)) throw err;
    return {
      status: ERROR_CODES[err.code].http,
      body: { code: err.code, message: err.message, details: err.details },
    };
  }
}
