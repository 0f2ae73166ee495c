/**
 * Properties of the gate for every input, not only the red-team cases (fast-check): whatever tool
 * name and JSON arguments an agent sends — huge, deeply nested, odd Unicode, `__proto__` keys —
 * `gate.invoke` resolves within 2 s to a decision (allow, deny or pending approval), never
 * throws, and never names a tool outside the session's set in a denial the caller did not name
 * first.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { InProcessCall as CallContext, GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { parseConfigText } from '../../src/operations/config/index.js';
import { backends } from '../support/backends.js';
import { fc } from '../support/property.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validSendTool, validTool } from '../support/tools.js';

const admin: Actor = { id: 'property-admin', via: 'library' };
const DEADLINE_MS = 2000;
/** Names of the session's set the generators pick from. */
const SET = [
  'loose_echo',
  'loose_urls',
  'loose_paths',
  'loose_send',
  'get_order',
  'search_tickets',
  'send_email',
  'add_label',
];
const DEMO_CATALOG = readFileSync(new URL('../../demo/catalog.yaml', import.meta.url), 'utf8');

/**
 * Loose schemas (any value under a fixed top-level member), so arbitrary arguments get past the
 * schema step to policy, approval and run.
 */
const LOOSE_OUTPUT = { type: 'object' };
function looseInput(member: string, schema: Record<string, unknown>) {
  return {
    type: 'object',
    additionalProperties: false,
    required: [member],
    properties: { [member]: schema },
  };
}
/** A loose tool under `loose:use`, run inline by `prop.echo`; `extra` is what sets it apart. */
function loose(
  build: typeof validTool,
  id: string,
  description: string,
  extra: Record<string, unknown>,
) {
  return build({
    id,
    name: id,
    description,
    required_capabilities: ['loose:use'],
    runtime: { kind: 'inline', handler: 'prop.echo' },
    output_schema: LOOSE_OUTPUT,
    ...extra,
  });
}
function looseTools(root: string) {
  return [
    loose(validTool, 'loose_echo', 'Echo whatever object it is given, for testing.', {
      data_access: 'public',
      input_schema: looseInput('payload', {}),
    }),
    loose(validTool, 'loose_urls', 'Fetch every address given under any member name.', {
      data_access: 'public',
      egress: { mode: 'constrained', hosts: ['api.example.com'] },
      input_schema: looseInput('urls', {
        type: 'object',
        additionalProperties: { type: 'string', format: 'uri' },
      }),
    }),
    loose(validTool, 'loose_paths', 'Read every workspace file given under any member name.', {
      arguments_policy: { path_roots: [root] },
      input_schema: looseInput('paths', {
        type: 'object',
        additionalProperties: { 'x-toolgate': 'path' },
      }),
    }),
    loose(validSendTool, 'loose_send', 'Send whatever object it is given to the partner.', {
      input_schema: looseInput('payload', {}),
    }),
  ];
}

/** Tools agents are never offered here: other agents', withheld and gated ones. */
const OUTSIDE = [
  'post_webhook',
  'read_file',
  'refund_order',
  'grant_role',
  'hidden_tool',
  'other_agents_tool',
];

/** An object with an own `__proto__` member, as JSON.parse makes one (never a prototype). */
function withProtoKey(value: unknown, rest: Record<string, unknown>): Record<string, unknown> {
  const others = JSON.stringify(rest).slice(1, -1);
  return JSON.parse(`{"__proto__":${JSON.stringify(value)}${others === '' ? '' : `,${others}`}}`);
}

/** Nesting built in a loop, as deep as asked, without recursion. */
function nested(depth: number, array: boolean): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = array ? [value] : { a: value };
  return value;
}

const weirdText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.constantFrom(
    '\u0000',
    '\u202e',
    '\u200b',
    '\ufeff',
    'e\u0301',
    '\u{1f600}',
    '%00',
    '../..',
    '__proto__',
    'constructor',
    'https://api.example.com/a',
    'https://127.0.0.1/',
    'docs/readme.md',
    '/etc/passwd',
  ),
);

const json = fc.jsonValue({ maxDepth: 5, stringUnit: 'binary' });

const anyArgs: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: json, weight: 3 },
  { arbitrary: fc.dictionary(weirdText, json, { maxKeys: 6 }), weight: 3 },
  { arbitrary: fc.dictionary(weirdText, weirdText, { maxKeys: 6 }), weight: 3 },
  fc
    .tuple(json, fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 3 }))
    .map(([v, rest]) => withProtoKey(v, rest)),
  fc.tuple(weirdText, fc.constantFrom('constructor', 'prototype', 'toString')).map(([v, k]) => ({
    [k]: v,
    nested: { [k]: { prototype: v } },
  })),
  fc
    .tuple(fc.integer({ min: 1, max: 6000 }), fc.boolean())
    .map(([d, array]) => ({ payload: nested(d, array) })),
  fc
    .tuple(fc.integer({ min: 1, max: 400_000 }), fc.constantFrom('x', 'é', '\u{1f600}'))
    .map(([n, ch]) => ({ payload: ch.repeat(n) })),
  fc
    .integer({ min: 0, max: 20_000 })
    .map((n) => ({ list: Array.from({ length: n }, (_, i) => i) })),
  fc.record({ order_id: fc.stringMatching(/^ORD-[0-9]{6}$/) }),
  fc.record({ query: weirdText, limit: fc.integer({ min: -5, max: 60 }) }, { requiredKeys: [] }),
  fc.record({ to: fc.emailAddress(), subject: weirdText, body: weirdText }),
);

const urlDict = fc.dictionary(
  weirdText,
  fc.oneof(
    weirdText,
    fc.webUrl().map((u) => u.replace(/^http:/, 'https:')),
  ),
  { maxKeys: 5 },
);
const pathDict = fc.dictionary(
  weirdText,
  fc.oneof(weirdText, fc.constantFrom('docs', 'docs/readme.md', 'docs/../docs/x', 'new/file.txt')),
  { maxKeys: 5 },
);

/** Arbitrary values, also wrapped in the member each loose tool takes, so they get past the schema. */
const args: fc.Arbitrary<unknown> = fc.oneof(
  anyArgs,
  anyArgs.map((payload) => ({ payload })),
  urlDict.map((urls) => ({ urls })),
  pathDict.map((paths) => ({ paths })),
  fc
    .tuple(weirdText, fc.constantFrom('urls', 'paths'))
    .map(([v, member]) => ({ [member]: withProtoKey(v, { b: v }) })),
);

/** A tool of the set with arguments shaped for it, so calls reach policy, approval and run. */
const matched: fc.Arbitrary<[string, unknown]> = fc.oneof(
  anyArgs.map((payload): [string, unknown] => ['loose_echo', { payload }]),
  anyArgs.map((payload): [string, unknown] => ['loose_send', { payload }]),
  urlDict.map((urls): [string, unknown] => ['loose_urls', { urls }]),
  pathDict.map((paths): [string, unknown] => ['loose_paths', { paths }]),
  fc
    .tuple(weirdText, fc.constantFrom('loose_urls', 'loose_paths'))
    .map(([v, tool]): [string, unknown] => [
      tool,
      { [tool === 'loose_urls' ? 'urls' : 'paths']: withProtoKey(v, { b: v }) },
    ]),
  anyArgs.map((value): [string, unknown] => ['get_order', value]),
  anyArgs.map((value): [string, unknown] => ['search_tickets', value]),
  anyArgs.map((value): [string, unknown] => ['send_email', value]),
);

function toolNames(set: readonly string[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...set, ...OUTSIDE), weight: 4 },
    {
      arbitrary: fc
        .tuple(fc.constantFrom(...set, ...OUTSIDE), weirdText, fc.boolean())
        .map(([name, extra, before]) => (before ? extra + name : name + extra)),
      weight: 2,
    },
    fc.constantFrom(...OUTSIDE).map((n) => n.toUpperCase()),
    weirdText,
    fc.string({ maxLength: 300 }),
    fc.anything({ maxDepth: 2 }),
  );
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no decision within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The caller's own words: a denial may repeat what it was sent, never volunteer more. */
function sentText(name: unknown, value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = '';
  }
  return `${String(name)} ${text}`;
}

describe('gate properties (fast-check)', () => {
  const [sqlite] = backends();
  let tg: Gateway;
  let drop: () => Promise<void>;
  let root: string;
  let ctx: CallContext;
  let set: string[];

  before(async () => {
    assert.ok(sqlite);
    const fresh = await sqlite.fresh();
    drop = fresh.drop;
    root = await realpath(await mkdtemp(path.join(tmpdir(), 'toolgate-gate-prop-')));
    await mkdir(path.join(root, 'docs'));
    await writeFile(path.join(root, 'docs', 'readme.md'), 'hello');
    tg = await openGateway({
      db: fresh.url,
      executor: demoExecutor().register('prop.echo', (a) => ({ echoed: Object.keys(a).length })),
    });
    await tg.config.apply(parseConfigText(DEMO_CATALOG), admin);
    await approvePendingReviews(tg);
    const tools = [
      ...looseTools(root),
      validTool({
        id: 'hidden_tool',
        name: 'hidden_tool',
        description: 'A tool no agent here holds a grant for.',
        required_capabilities: ['hidden:use'],
        runtime: { kind: 'inline', handler: 'prop.echo' },
      }),
      validTool({
        id: 'other_agents_tool',
        name: 'other_agents_tool',
        description: 'A tool only another agent holds a grant for.',
        required_capabilities: ['other:use'],
        runtime: { kind: 'inline', handler: 'prop.echo' },
      }),
    ];
    await tg.config.apply(
      [
        ...tools.map((spec) => ({ kind: 'Tool', spec })),
        { kind: 'Agent', spec: { id: 'other-agent', owner: 'qa' } },
        { kind: 'Grant', spec: { agent: 'support-bot', capabilities: ['loose:use'] } },
        { kind: 'Grant', spec: { agent: 'other-agent', capabilities: ['other:use'] } },
      ],
      admin,
    );
    await approvePendingReviews(tg);
    const session = await tg.sessions.open('support-bot');
    ctx = { agentId: 'support-bot', sessionId: session.id };
    set = session.tools.flatMap((t) => [t.name, t.id]);
    for (const outside of OUTSIDE) assert.ok(!set.includes(outside), `${outside} is in the set`);
    assert.ok(set.includes('loose_echo') && set.includes('get_order'));
  });

  after(async () => {
    await tg?.close();
    await drop?.();
    if (root) await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('invoke resolves within 2 s to allow, deny or pending approval, and never throws', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: matched, weight: 2 },
          { arbitrary: fc.tuple(toolNames(SET), args), weight: 1 },
        ),
        async ([name, value]) => {
          let decision: GateDecision;
          try {
            decision = await within(tg.gate.invoke(ctx, name, value), DEADLINE_MS);
          } catch (err) {
            assert.fail(`invoke threw for ${String(name).slice(0, 80)}: ${String(err)}`);
          }
          assert.ok(['allow', 'deny', 'pending_approval'].includes(decision.kind), decision.kind);
          if (decision.kind !== 'deny') return;
          assert.equal(typeof decision.code, 'string');
          assert.equal(typeof decision.rule, 'string');
          const sent = sentText(name, value);
          for (const outside of OUTSIDE) {
            if (!decision.message.includes(outside)) continue;
            assert.ok(sent.includes(outside), `denial names ${outside}: ${decision.message}`);
          }
          assert.ok(JSON.stringify(decision.details ?? {}).length < 100_000, 'details stay small');
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a name outside the set is refused exactly like a name nobody registered', async () => {
    const unknown = await tg.gate.invoke(ctx, 'zz_nobody_registered_this', {});
    assert.equal(unknown.kind, 'deny');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...OUTSIDE), args, async (name, value) => {
        const d = await within(tg.gate.invoke(ctx, name, value), DEADLINE_MS);
        assert.equal(d.kind, 'deny');
        if (d.kind !== 'deny' || unknown.kind !== 'deny') return;
        assert.deepEqual(
          { code: d.code, rule: d.rule, message: d.message, details: d.details },
          {
            code: unknown.code,
            rule: unknown.rule,
            message: unknown.message,
            details: unknown.details,
          },
        );
      }),
      { numRuns: 60 },
    );
  });

  test('a lone surrogate in an argument the schema accepts is refused, not thrown', async () => {
    const d = await tg.gate.invoke(ctx, 'loose_echo', { text: 'a\ud800b' });
    assert.equal(d.kind, 'deny');
  });
});
