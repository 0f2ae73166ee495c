/**
 * Operators for tests: plain Operator values, what the REST hook or the console sets after
 * authenticating a credential, their second factors enrolled through the admin API, and their
 * confirmation the documented way (docs/security-model.md, "Four eyes: two people, not two
 * accounts"), so a test world's approvers count in four-eyes changes.
 */
import { join } from 'node:path';
import type { AdminApi } from '../../src/api/index.js';
import { ERROR_CODES, isToolgateError } from '../../src/core/index.js';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { type ApprovalView, totpAt } from '../../src/domain/decisions/index.js';
import { totpStep } from '../../src/domain/decisions/totp.js';
import {
  BOOTSTRAP_OPERATOR,
  type Operator,
  type OperatorRole,
} from '../../src/domain/operators/index.js';
import { approvalSigner } from '../../src/edge/cli/runtime-files.js';
import { openToolgate } from '../../src/host/toolgate.js';

export function operator(id: string, roles: readonly OperatorRole[] = ['approver']): Operator {
  return { id, name: id, roles, teams: [], authenticatedBy: 'personal-token' };
}

type Admin = Pick<AdminApi, 'secondFactor' | 'operators'>;

/** A test world's two admins who confirm its deciders, with their second factors. */
interface ConfirmingAdmins {
  readonly genesis: Operator;
  readonly confirmer: Operator;
  readonly secrets: Map<string, string>;
  /** The newest TOTP step each of them has used (a code is good for one use). */
  readonly lastStep: Map<string, number>;
}

const confirming = new WeakMap<object, ConfirmingAdmins>();

/** The world's genesis admin, once `confirmDeciders` has set it up; otherwise the bootstrap. */
function creatorOf(admin: Admin): Operator {
  return confirming.get(admin)?.genesis ?? BOOTSTRAP_OPERATOR;
}

/**
 * The real clock, moved on by what a test would otherwise have waited for: a gateway opened with
 * `clock: c.now` and codes taken from `c` never wait for the next 30 s step (see nextCode).
 */
export interface SteppableClock {
  now(): Date;
  advance(ms: number): void;
}

export function steppableClock(): SteppableClock {
  let skew = 0;
  return {
    now: () => new Date(Date.now() + skew),
    advance: (ms) => {
      skew += ms;
    },
  };
}

const STEP_MS = 30_000;
/** The previous step's code is used only while this much of the current step remains. */
const PREVIOUS_STEP_MARGIN_MS = 20_000;

/**
 * Codes for distinct steps of the people in `secrets` (id to enrolled secret), chosen from the
 * gateway's clock: the verifier accepts the current step ±1 and refuses any step at or below the
 * last one used. The next code is the lowest unused step in that window — the previous step only
 * while 20 s of the current one remain, so it is still in the window when the server checks it; a
 * later step is valid for at least 30 s. Only when all three are used does the next step have to
 * come: the clock is moved on to it (what waiting for it would do, without the wait). A code taken
 * with `consumed` false is for an attempt meant to be refused before it is checked: the next code
 * reuses its step.
 */
export function totpCodes(
  secrets: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
  clock: SteppableClock,
): (id: string, consumed?: boolean) => string {
  const lastStep = new Map<string, number>();
  return (id, consumed = true) => {
    const secret =
      secrets instanceof Map ? secrets.get(id) : (secrets as Record<string, string>)[id];
    if (!secret) throw new Error(`no second factor enrolled for ${id} in this test`);
    for (;;) {
      const now = clock.now().getTime();
      const current = totpStep(new Date(now));
      const lowest =
        now - current * STEP_MS <= STEP_MS - PREVIOUS_STEP_MARGIN_MS ? current - 1 : current;
      const step = Math.max((lastStep.get(id) ?? -1) + 1, lowest);
      if (step <= current + 1) {
        if (consumed) lastStep.set(id, step);
        return totpAt(secret, new Date(step * STEP_MS));
      }
      // All of the window is used: the clock moves on to the next step.
      clock.advance((current + 1) * STEP_MS - now + 10);
    }
  };
}

/**
 * A fresh code of `op`, newer than its last (the verifier accepts ±1 step around its clock). With
 * `at` (a test's fixed clock) any of the three steps around it; on a running clock the previous
 * step only while 20 s of the current one remain (so it is still in the window when checked), and
 * when the window is used up the next step must come: a steppable clock (the gateway's) is moved
 * on to it, the real one is waited for.
 */
async function nextCode(
  world: ConfirmingAdmins,
  op: Operator,
  at?: Date | SteppableClock,
): Promise<string> {
  const last = world.lastStep.get(op.id) ?? Number.NEGATIVE_INFINITY;
  const fixed = at instanceof Date ? at : undefined;
  for (;;) {
    const ms = (fixed ?? (at instanceof Date ? undefined : at?.now()) ?? new Date()).getTime();
    const now = totpStep(new Date(ms));
    const previousOk = fixed !== undefined || ms - now * 30_000 <= 10_000;
    const step = [previousOk ? now - 1 : now, now, now + 1].find((s) => s > last);
    if (step !== undefined) {
      world.lastStep.set(op.id, step);
      return totpAt(world.secrets.get(op.id) ?? '', new Date(step * 30_000));
    }
    if (fixed !== undefined) {
      throw new Error(`${op.id} has used every code of this 30 s step; move the clock on`);
    }
    const wait = (now + 1) * 30_000 - ms + 10;
    if (at !== undefined && !(at instanceof Date)) at.advance(wait);
    else await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * Sets up the world's confirming admins, the documented way: the bootstrap token creates the
 * first admin (`world-genesis`, confirmed at the genesis) and a second (`world-confirmer`) and
 * enrols the first one's second factor; the first admin, as its own account, enrols the second's
 * and, being the only confirmed decider, confirms it.
 */
async function confirmingAdmins(
  admin: Admin,
  at?: Date | SteppableClock,
): Promise<ConfirmingAdmins> {
  const known = confirming.get(admin);
  if (known) return known;
  const genesis = operator('world-genesis', ['admin']);
  const confirmer = operator('world-confirmer', ['admin']);
  const world: ConfirmingAdmins = {
    genesis,
    confirmer,
    secrets: new Map(),
    lastStep: new Map(),
  };
  await admin.operators.create(BOOTSTRAP_OPERATOR, { id: genesis.id, roles: ['admin'] });
  await admin.operators.create(BOOTSTRAP_OPERATOR, { id: confirmer.id, roles: ['admin'] });
  world.secrets.set(
    genesis.id,
    (await admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, genesis.id)).secret,
  );
  // The first admin is set up: from here on it, as its own account, arms the second.
  world.secrets.set(confirmer.id, (await admin.secondFactor.enroll(genesis, confirmer.id)).secret);
  await admin.operators.confirm(genesis, confirmer.id, await nextCode(world, genesis, at));
  confirming.set(admin, world);
  return world;
}

/**
 * Confirms each of `ids` (approver or admin accounts) the documented way, as the world's second
 * admin, so they count in four-eyes changes. `at` is the gateway's fixed clock now, if it has
 * one (its codes must be current), or its steppable clock; without it the real clock. Call it
 * after the accounts' second factors are enrolled: an enrolment by someone else clears a
 * confirmation.
 */
export async function confirmDeciders(
  admin: Admin,
  ids: readonly string[],
  at?: Date | SteppableClock,
): Promise<void> {
  const world = await confirmingAdmins(admin, at);
  for (const id of ids) {
    await admin.operators.confirm(world.confirmer, id, await nextCode(world, world.confirmer, at));
  }
}

/**
 * Enrols `op`'s second factor as the bootstrap admin, or once `confirmDeciders` has set up the
 * world's admins as its genesis admin (creating its operator account first when it has none:
 * second factors belong to accounts); returns a code source for it.
 */
export async function enrol(
  admin: Pick<AdminApi, 'secondFactor' | 'operators'>,
  op: Operator | string,
): Promise<{ secret: string; code: (at: Date) => string }> {
  const id = typeof op === 'string' ? op : op.id;
  const roles = typeof op === 'string' ? (['approver'] as const) : op.roles;
  try {
    await admin.operators.create(creatorOf(admin), { id, roles: [...roles] });
  } catch (err) {
    if (!isToolgateError(err) || err.code !== 'OPERATOR_EXISTS') throw err;
  }
  const { secret } = await admin.secondFactor.enroll(creatorOf(admin), id);
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
