/**
 * @module Tool definitions to start from in tests, all in one place: each is complete and valid,
 * and each test changes only what it is about (the overrides).
 */
import assert from 'node:assert/strict';
import { demoExecutor } from '../../src/execution/runtimes/index.js';

export type Definition = Record<string, unknown>;

/** A complete, valid, clean `read` tool definition. */
export function validTool(overrides: Definition = {}): Definition {
  return {
    id: 'lookup_invoice',
    version: '1.0.0',
    name: 'lookup_invoice',
    description: 'Return the status and amount of one invoice by its number.',
    tags: ['billing', 'read'],
    owner: 'billing-team',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['invoice'],
      properties: {
        invoice: { type: 'string', maxLength: 40 },
        currency: { enum: ['EUR', 'USD'] },
      },
    },
    output_schema: {
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string' }, amount_cents: { type: 'integer' } },
    },
    action_class: 'read',
    data_access: 'private',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: ['billing:read'],
    runtime: { kind: 'inline', handler: 'test.lookup_invoice' },
    provenance: 'internal',
    ...overrides,
  };
}

/**
 * A valid external_send tool with a constrained egress host and an http runtime. The notification
 * service sends anywhere, so its `to` recipient is what constrains it (a destinations rule on
 * the customer domains the tests use), kept only while the input schema has a `to`.
 */
export function validSendTool(overrides: Definition = {}): Definition {
  const tool = validTool({
    id: 'notify_customer',
    name: 'notify_customer',
    description: 'Send a short notification message to one customer.',
    tags: ['notify'],
    action_class: 'external_send',
    data_access: 'none',
    egress: { mode: 'constrained', hosts: ['notify.example.com'] },
    access_tier: 'restricted',
    required_capabilities: ['notify:send'],
    runtime: {
      kind: 'http',
      base_url: 'https://notify.example.com',
      method: 'POST',
      path: '/v1/send',
    },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['to', 'text'],
      properties: {
        to: { type: 'string', format: 'email' },
        text: { type: 'string', maxLength: 500 },
      },
    },
    output_schema: { type: 'object', properties: { id: { type: 'string' } } },
    ...overrides,
  });
  const props = (tool.input_schema as { properties?: Record<string, unknown> }).properties ?? {};
  if (tool.destinations === undefined && Object.hasOwn(props, 'to')) {
    tool.destinations = [
      {
        argument: '/to',
        kind: 'email',
        allow: { email_domains: ['customer.example', 'example.com', 'b.example'] },
      },
    ];
  }
  return tool;
}

/** The ten tools of demo/catalog.yaml, sorted. */
export const DEMO_TOOL_IDS = [
  'add_label',
  'create_ticket',
  'get_order',
  'grant_role',
  'http_get',
  'post_webhook',
  'read_file',
  'refund_order',
  'search_tickets',
  'send_email',
];

/**
 * A read tool over HTTP with no approval: `GET https://HOST/v1/items/{item}`, capability
 * `api:read`, egress constrained to `host`.
 */
export function httpReadTool(
  id: string,
  host = 'api.example.test',
  overrides: Definition = {},
): Definition {
  return validSendTool({
    id,
    name: id,
    description: 'Look up one catalogue item by its id.',
    action_class: 'read',
    data_access: 'public',
    access_tier: 'public',
    approval: { mode: 'none' },
    required_capabilities: ['api:read'],
    egress: { mode: 'constrained', hosts: [host] },
    runtime: { kind: 'http', base_url: `https://${host}/v1`, method: 'GET', path: '/items/{item}' },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['item'],
      properties: { item: { type: 'string', maxLength: 40 } },
    },
    output_schema: { type: 'object' },
    ...overrides,
  });
}

/**
 * A tool run inline (by the `noop` handler unless `runtime` says otherwise) that takes no
 * arguments and answers any object: a restricted `read` of no data, no egress, needing no
 * capability unless `required_capabilities` names some. `purpose` ends its description.
 */
export function inlineTool(
  id: string,
  overrides: Definition = {},
  purpose = 'the tests',
): Definition {
  return {
    id,
    version: '1.0.0',
    name: id,
    description: `The ${id} test tool, run inline by toolgate for ${purpose}.`,
    tags: ['test'],
    owner: 'qa',
    input_schema: { type: 'object', additionalProperties: false, properties: {} },
    output_schema: { type: 'object' },
    action_class: 'read',
    data_access: 'none',
    egress: { mode: 'none' },
    access_tier: 'restricted',
    required_capabilities: [],
    runtime: { kind: 'inline', handler: 'noop' },
    provenance: 'internal',
    ...overrides,
  };
}

/**
 * A `Tool` document for `/v1/apply`: `validTool` of no data, run inline by the `t.ok` handler
 * unless `spec` says otherwise.
 */
export function toolDocument(spec: Definition): Definition {
  return {
    apiVersion: 'toolgate/v1',
    kind: 'Tool',
    spec: validTool({ data_access: 'none', runtime: { kind: 'inline', handler: 't.ok' }, ...spec }),
  };
}

/**
 * A `Tool` document of `validTool` named `id`, described as `description`, touching no data and
 * answering any object, under `capability`; `overrides` on top.
 */
export function objectToolDocument(
  id: string,
  description: string,
  capability: string,
  overrides: Definition,
): Definition {
  return {
    kind: 'Tool',
    spec: validTool({
      id,
      name: id,
      description,
      data_access: 'none',
      required_capabilities: [capability],
      output_schema: { type: 'object' },
      ...overrides,
    }),
  };
}

/**
 * The spec of `pay`: a reversible write under `capability` whose cost is its one `amount`
 * argument in major units; for `toolDocument`.
 */
export function paySpec(capability: string): Definition {
  return {
    id: 'pay',
    name: 'pay',
    action_class: 'reversible_write',
    required_capabilities: [capability],
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['amount'],
      properties: { amount: { type: 'number', minimum: 0 } },
    },
    cost: { argument: 'amount', unit: 'major' },
  };
}

/**
 * A command tool of the sandbox echo script (test/fixtures/sandbox/echo-tool.sh): one short
 * `text` argument, under `sandbox:test`; `overrides` give its runtime, sandbox and output.
 */
export function echoTool(id: string, overrides: Definition): Definition {
  return validTool({
    id,
    name: id,
    description: 'Echo the arguments back from inside a sandbox.',
    data_access: 'none',
    required_capabilities: ['sandbox:test'],
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: { text: { type: 'string', maxLength: 200 } },
    },
    ...overrides,
  });
}

/**
 * `send_note`: a restricted external_send tool run inline by the `noop` handler, capability
 * `note:send`, that always waits for approval; `properties` are its input's.
 */
export function noteTool(properties: Definition = {}): Definition {
  return inlineTool('send_note', {
    description: 'Send a short note to the team; run inline by toolgate for the tests.',
    input_schema: { type: 'object', additionalProperties: false, properties },
    action_class: 'external_send',
    required_capabilities: ['note:send'],
  });
}

/** `close_ticket`: a public, non-idempotent reversible write run inline by the `t.close` handler. */
export function closeTicketTool(overrides: Definition = {}): Definition {
  return validTool({
    id: 'close_ticket',
    name: 'close_ticket',
    description: 'Close one support ticket by its id.',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['ticket'],
      properties: { ticket: { type: 'string', maxLength: 20 } },
    },
    output_schema: { type: 'object' },
    action_class: 'reversible_write',
    data_access: 'public',
    idempotent: false,
    runtime: { kind: 'inline', handler: 't.close' },
    ...overrides,
  });
}

/**
 * The built-in tool `hold` (handler `test.hold`, capability docs:read) that a suite registers as
 * a call waiting on its latch, to keep a request in flight without timing luck.
 */
export function holdTool(
  description = 'Wait until the test lets go; used to keep a request in flight.',
  properties: Definition = {},
): Definition {
  return inlineTool('hold', {
    description,
    input_schema: { type: 'object', additionalProperties: false, properties },
    data_access: 'public',
    access_tier: 'public',
    required_capabilities: ['docs:read'],
    runtime: { kind: 'inline', handler: 'test.hold' },
  });
}

/**
 * The runtime side of `holdTool`: an executor whose `test.hold` calls tell `onEnter` they arrived
 * and then wait on a latch, closed by `closeLatch` until `release`; `until` waits for arrivals.
 */
export function heldCalls(onEnter: () => void) {
  let open: () => void = () => {};
  let latch = Promise.resolve();
  const arrivals: (() => void)[] = [];
  return {
    executor: demoExecutor().register('test.hold', async () => {
      onEnter();
      for (const r of arrivals.splice(0)) r();
      await latch;
      return {};
    }),
    closeLatch() {
      latch = new Promise((r) => {
        open = r;
      });
    },
    release() {
      open();
    },
    /** Resolves once `done()` holds, looking again at each arrival. */
    async until(done: () => boolean) {
      while (!done()) await new Promise<void>((r) => arrivals.push(r));
    },
  };
}

/**
 * `heldCalls` counting their arrivals: `entered()` since the start or the last `recount()`;
 * `arrived(n)` waits until `n` have come.
 */
export function countedHeldCalls() {
  let entered = 0;
  const held = heldCalls(() => entered++);
  return {
    ...held,
    entered: () => entered,
    recount: () => {
      entered = 0;
    },
    arrived: (n: number) => held.until(() => entered >= n),
  };
}

/** `wipe_disk`: an irreversible, privileged tool under `disk:wipe` (a change needs two people). */
export function wipeDiskTool(): Definition {
  return validTool({
    id: 'wipe_disk',
    name: 'wipe_disk',
    action_class: 'irreversible',
    access_tier: 'privileged',
    required_capabilities: ['disk:wipe'],
  });
}

/** A REST session opened at `base` as `token`; its id. */
export async function restSession(base: string, token: string): Promise<string> {
  const res = await fetch(`${base}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(res.status, 201);
  return ((await res.json()) as { id: string }).id;
}

/** A REST call of `holdTool` (as `hold`) in `sessionId`: it answers once the latch is released. */
export function holdCall(base: string, token: string, sessionId: string): Promise<Response> {
  return fetch(`${base}/v1/sessions/${sessionId}/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool: 'hold', arguments: {} }),
  });
}

/** `note`: a reversible write run inline by `test.echo`, capability notes:write, always approved. */
export function approvedNoteTool(): Definition {
  return validTool({
    id: 'note',
    name: 'note',
    action_class: 'reversible_write',
    runtime: { kind: 'inline', handler: 'test.echo' },
    required_capabilities: ['notes:write'],
    approval: { mode: 'always' },
  });
}
