/**
 * @module Stock MCP clients completing approvals (docs/mcp.md, "Stock clients wait for the
 * person"): one world with a tool that needs approval and has an output schema, two agents and a
 * second key of the first (three principals), an approver who decides over REST with a personal
 * token, and the readings the suites assert on — the approvals of a call and how often the tool ran.
 */
import assert from 'node:assert/strict';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { ApprovalView } from '../../src/domain/decisions/index.js';
import type { HttpOptions } from '../../src/edge/rest/index.js';
import type { ToolgateOptions } from '../../src/host/toolgate.js';
import type { Store } from '../../src/records/store/index.js';
import type { Backend } from './backends.js';
import { approvePendingReviews } from './reviews.js';
import { inlineTool } from './tools.js';
import { openWorld, toolRecords, type World } from './world.js';

/** The tool: an external send that always waits for approval, with a strict output schema. */
export const STOCK_TOOL = 'notify_customer';
export const OWNER = 'stock-bot';
export const STRANGER = 'other-bot';

/** `notify_customer` at `version`: its result must carry `message_id` (the output schema). */
export function stockTool(version = '1.0.0') {
  return inlineTool(STOCK_TOOL, {
    version,
    description: 'Send a short notice to one customer; run inline by toolgate for the tests.',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['to', 'text'],
      properties: {
        to: { type: 'string', maxLength: 100 },
        text: { type: 'string', maxLength: 500 },
      },
    },
    output_schema: {
      type: 'object',
      required: ['message_id'],
      properties: { message_id: { type: 'string' } },
    },
    action_class: 'external_send',
    approval: { mode: 'always' },
    required_capabilities: ['notify:send'],
    runtime: { kind: 'inline', handler: 'demo.send_email' },
  });
}

export interface StockWorld {
  readonly world: World;
  readonly base: string;
  readonly inspector: Store;
  /** The owner's key, a second key of the same agent (another principal), another agent's. */
  readonly keys: { readonly owner: string; readonly ownerOther: string; readonly stranger: string };
  /** The approver decides over REST, as its personal token. */
  approve(id: string): Promise<void>;
  reject(id: string, reason: string): Promise<void>;
  status(id: string): Promise<ApprovalView['status']>;
  /** Every approval of `agent` for `args` (any status), oldest first. */
  approvalsOf(agent: string, args: Record<string, unknown>): Promise<ApprovalView[]>;
  /** The next pending approval of `agent` for `args` not in `known`, once it exists. */
  nextApproval(
    agent: string,
    args: Record<string, unknown>,
    known?: ReadonlySet<string>,
  ): Promise<string>;
  /** How many times the tool started (its `call.pre` records), for `agent`. */
  runs(agent?: string): Promise<number>;
  /** Registers and activates another version of the tool (reviews approved). */
  addVersion(version: string): Promise<void>;
  close(): Promise<void>;
}

const APPROVER_TOKEN_OF = 'stock-approver';

export async function openStockWorld(
  backend: Backend,
  approvalWaitMs: number,
  options: ToolgateOptions = {},
  http: Partial<HttpOptions> = {},
): Promise<StockWorld> {
  const world = await openWorld({
    backend,
    // The 2026-07-28 era seals each round's requestState under a key derived from it.
    options: { masterKey: MasterKey.generate(), ...options },
    tools: [stockTool()],
    agents: [
      { id: OWNER, capabilities: ['notify:send'] },
      { id: STRANGER, capabilities: ['notify:send'] },
    ],
    operators: [{ id: APPROVER_TOKEN_OF, roles: ['approver'], token: true }],
    rest: { ...http, mcp: { ...http.mcp, approvalWaitMs } },
    inspector: true,
  });
  const inspector = world.inspector as Store;
  const ownerOther = (await world.tg.keys.issue(OWNER, { id: 'test-admin', via: 'library' }))
    .apiKey;
  const token = world.tokens[APPROVER_TOKEN_OF] ?? '';
  const decide = async (path: string, body: unknown) => {
    const reply = await world.send('POST', path, body, token);
    assert.equal(reply.status, 200, `${path}: ${reply.text}`);
  };
  const approvalsOf = async (agent: string, args: Record<string, unknown>) => {
    const all = await world.tg.admin.approvals.list();
    const wanted = JSON.stringify(args);
    return all
      .filter(
        (a) =>
          a.agent_id === agent &&
          a.tool_id === STOCK_TOOL &&
          JSON.stringify(a.rendered.arguments) === wanted,
      )
      .reverse();
  };
  return {
    world,
    base: world.base,
    inspector,
    keys: {
      owner: world.keys[OWNER] ?? '',
      ownerOther,
      stranger: world.keys[STRANGER] ?? '',
    },
    approve: (id) => decide(`/v1/approvals/${id}/approve`, {}),
    reject: (id, reason) => decide(`/v1/approvals/${id}/reject`, { reason }),
    status: async (id) => (await world.tg.admin.approvals.get(id)).status,
    approvalsOf,
    nextApproval: async (agent, args, known = new Set()) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const fresh = (await approvalsOf(agent, args)).find(
          (a) => a.status === 'pending' && !known.has(a.id),
        );
        if (fresh) return fresh.id;
        if (Date.now() > deadline) assert.fail(`no new approval of ${agent} for ${wanted(args)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    runs: async (agent = OWNER) => {
      const rows = await toolRecords(inspector, STOCK_TOOL, 'call.pre');
      return rows.filter((r) => r.agent_id === agent).length;
    },
    addVersion: async (version) => {
      await world.tg.config.apply([{ kind: 'Tool', spec: stockTool(version) }], {
        id: 'test-admin',
        via: 'library',
      });
      await approvePendingReviews(world.tg.admin);
    },
    close: () => world.close(),
  };
}

function wanted(args: Record<string, unknown>): string {
  return JSON.stringify(args);
}

/** A call's answer as the suites read it: error or not, its decision's code and rule, its text. */
export interface Answer {
  readonly isError: boolean;
  readonly code?: string | undefined;
  readonly rule?: string | undefined;
  readonly text: string;
  readonly structured?: Record<string, unknown> | undefined;
}

/** Reads a tools/call result of either SDK. */
export function answerOf(result: unknown): Answer {
  const r = result as {
    isError?: boolean;
    content?: { type: string; text?: string }[];
    structuredContent?: Record<string, unknown>;
    _meta?: Record<string, unknown>;
  };
  const decision = r._meta?.['toolgate/decision'] as { code?: string; rule?: string } | undefined;
  return {
    isError: r.isError === true,
    code: decision?.code,
    rule: decision?.rule,
    text: (r.content ?? []).map((c) => c.text ?? '').join(' '),
    structured: r.structuredContent,
  };
}
