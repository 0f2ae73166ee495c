/**
 * @module ReDoS through the documented interfaces: tools whose argument patterns backtrack
 * catastrophically on V8 (test/redteam/redos-patterns.json) are registered over REST and
 * imported from an upstream MCP server (test/fixtures/mcp/pattern-server.mjs); agents then send
 * the evil inputs over REST and with the official MCP SDK client while /healthz is polled. The
 * gate answers at once and /healthz stays under 100 ms throughout. Patterns only a backtracking
 * engine can run are refused at registration and at classification, each under its pointer.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../../src/core/index.js';
import { InlineExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { FIXTURES, nodeProvider } from '../providers/provider-support.js';
import { backends } from '../support/backends.js';
import { approveReview } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { connectMcp, openWorld, restClient, slowestHealthz, type World } from '../support/world.js';

const CASES = JSON.parse(
  readFileSync(new URL('./redos-patterns.json', import.meta.url), 'utf8'),
) as { pattern: string; evil: string; benign: string }[];

const ADMIN_TOKEN = 'redos-admin-token-0123456789abcdef0123456789';
const admin: Actor = { id: 'test-admin', via: 'library' };
/**
 * The bar: while evil inputs are checked, the liveness probe answers within 100 ms. It is
 * measured against a control run of the same calls with inputs of the same size that fail at
 * the first character, so a busy shared host's own scheduling delays (seen up to ~65 ms with no
 * calls at all) are not charged to the patterns; a backtracking engine stalls for seconds.
 */
const HEALTHZ_BUDGET_MS = 100;

function patternTool(i: number, pattern: string): Record<string, unknown> {
  return validTool({
    id: `pattern_tool_${i}`,
    name: `pattern_tool_${i}`,
    description: 'Echoes the value it was given.',
    data_access: 'none',
    required_capabilities: ['patterns:use'],
    runtime: { kind: 'inline', handler: 'test.echo' },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['value'],
      properties: {
        value: { type: 'string', pattern },
        labels: {
          type: 'object',
          patternProperties: { [pattern]: { type: 'string' } },
          additionalProperties: false,
        },
      },
    },
    output_schema: { type: 'object' },
  });
}

/** Runs the calls a few at a time while probing /healthz; the slowest probe and the answers. */
async function probeDuring<T, R>(
  base: string,
  items: readonly T[],
  run: (item: T) => Promise<R>,
): Promise<{ slowest: number; answers: R[] }> {
  const answers = inBatches(items, run);
  const slowest = await slowestHealthz(base, answers);
  return { slowest, answers: await answers };
}

/** The same string with every character replaced: equally long, failing at once. */
function defused(s: string): string {
  return '!'.repeat(s.length);
}

/**
 * A few calls in flight at a time: the probe then waits behind at most that many ordinary gate
 * calls (a few ms each), so what it measures is whether any one of them stalls the loop.
 */
async function inBatches<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 3) {
    out.push(...(await Promise.all(items.slice(i, i + 3).map(run))));
  }
  return out;
}

for (const backend of backends()) {
  describe(`catastrophic patterns never block the gateway (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let base = '';
    let key = '';
    const clients: Client[] = [];

    const send = restClient(() => base);
    const rest = (method: string, path: string, token: string, body?: unknown) =>
      send(method, path, body, token);

    before(async () => {
      const executor = new InlineExecutor().register('test.echo', (args) => ({ echo: args }));
      world = await openWorld({
        backend,
        actor: admin,
        options: { executor },
        agents: [
          {
            id: 'pattern-bot',
            display_name: 'Pattern agent',
            description: 'Calls tools with patterned arguments.',
            owner: 'platform-team',
            capabilities: ['patterns:use', 'everything:use'],
          },
        ],
        rest: { adminToken: ADMIN_TOKEN },
      });
      ({ tg, base } = world);
      key = world.keys['pattern-bot'] as string;
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await world.close();
    });

    test('over REST: evil inputs are refused at once and /healthz stays fast; benign ones run', async (t) => {
      for (const [i, c] of CASES.entries()) {
        const registered = await rest('POST', '/v1/tools', ADMIN_TOKEN, patternTool(i, c.pattern));
        assert.equal(registered.status, 201, JSON.stringify(registered.body));
      }
      const session = await rest('POST', '/v1/sessions', key, {});
      assert.equal(session.status, 201, JSON.stringify(session.body));
      const calls = `/v1/sessions/${String(session.body.id)}/calls`;

      // Benign calls first: they also compile each tool's validators, which is not what is measured.
      for (const [i, c] of CASES.entries()) {
        const ok = await rest('POST', calls, key, {
          tool: `pattern_tool_${i}`,
          arguments: { value: c.benign, labels: { [c.benign]: 'x' } },
        });
        assert.equal(ok.status, 200, `${c.pattern}: ${JSON.stringify(ok.body)}`);
      }

      const calling = (evil: (s: string) => string) =>
        CASES.flatMap((c, i) => [
          { tool: `pattern_tool_${i}`, arguments: { value: evil(c.evil) } },
          { tool: `pattern_tool_${i}`, arguments: { value: evil(c.evil.repeat(500)) } },
          {
            tool: `pattern_tool_${i}`,
            arguments: { value: c.benign, labels: { [evil(c.evil)]: 'x' } },
          },
        ]);
      const send = (a: unknown) => rest('POST', calls, key, a);
      const control = await probeDuring(base, calling(defused), send);
      const attack = await probeDuring(
        base,
        calling((s) => s),
        send,
      );
      t.diagnostic(
        `slowest /healthz during 15 evil REST calls: ${attack.slowest.toFixed(1)} ms (control ${control.slowest.toFixed(1)} ms)`,
      );
      for (const answer of [...control.answers, ...attack.answers]) {
        assert.equal(answer.status, 400, JSON.stringify(answer.body));
        assert.equal(answer.body.code, 'INPUT_INVALID');
      }
      assert.ok(
        attack.slowest < control.slowest + HEALTHZ_BUDGET_MS,
        `/healthz took ${attack.slowest.toFixed(1)} ms while evil inputs were checked (control ${control.slowest.toFixed(1)} ms)`,
      );
    });

    test('over REST: a pattern that needs backtracking is refused under its pointer; nothing is written', async () => {
      const refused = await rest(
        'POST',
        '/v1/tools',
        ADMIN_TOKEN,
        validTool({
          id: 'doubled_word',
          name: 'doubled_word',
          required_capabilities: ['patterns:use'],
          input_schema: {
            type: 'object',
            additionalProperties: false,
            properties: {
              word: { type: 'string', pattern: '^(\\w+) \\1$' },
              tail: { type: 'string', pattern: '^(?!admin)\\w+$' },
            },
          },
        }),
      );
      assert.equal(refused.status, 422);
      assert.equal(refused.body.code, 'DEFINITION_INVALID');
      const problems = (refused.body.details as { problems: { pointer: string; rule: string }[] })
        .problems;
      assert.deepEqual(
        problems.map((p) => [p.pointer, p.rule]),
        [
          ['/input_schema/properties/word/pattern', 'schema.pattern_unsupported'],
          ['/input_schema/properties/tail/pattern', 'schema.pattern_unsupported'],
        ],
      );
      assert.equal((await rest('GET', '/v1/tools/doubled_word', ADMIN_TOKEN)).status, 404);
    });

    test('through a provider import: the gate refuses evil inputs at once over MCP; a backreference pattern cannot be classified', async (t) => {
      await tg.providers.register(
        nodeProvider('patterns', join(FIXTURES, 'pattern-server.mjs'), [], {
          binds: [{ source: FIXTURES }],
        }),
        admin,
      );
      const shown = await tg.providers.show('patterns');
      const twice = shown.tools.find((t) => t.name === 'find_twice');
      assert.deepEqual(
        twice?.findings.map((f) => [f.rule, f.field]),
        [['schema.pattern_unsupported', '/inputSchema/properties/word/pattern']],
      );
      const classification = {
        action_class: 'read',
        data_access: 'public',
        egress: { mode: 'none' },
        access_tier: 'public',
        required_capabilities: ['everything:use'],
      };
      for (const tool of ['find_code', 'find_words']) {
        const res = await rest(
          'POST',
          `/v1/providers/patterns/tools/${tool}/classify`,
          ADMIN_TOKEN,
          classification,
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        // An upstream provider's tool is third-party: it goes live after its security review.
        const classified = res.body.tool as { id: string; version: string };
        await approveReview(tg.admin, classified.id, classified.version);
      }
      const refused = await rest(
        'POST',
        '/v1/providers/patterns/tools/find_twice/classify',
        ADMIN_TOKEN,
        classification,
      );
      assert.equal(refused.status, 422, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'DEFINITION_INVALID');
      assert.deepEqual(
        (refused.body.details as { problems: { pointer: string }[] }).problems.map(
          (p) => p.pointer,
        ),
        ['/input_schema/properties/word/pattern'],
      );

      const client = await connectMcp(base, key, 'redos-test');
      clients.push(client);
      const listed = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(
        listed.includes('patterns.find_code') || listed.includes('find_code'),
        listed.join(),
      );
      const nameOf = (tool: string) => listed.find((n) => n.endsWith(tool)) ?? tool;
      assert.ok(!listed.some((n) => n.endsWith('find_twice')));

      // The benign neighbour reaches the upstream and comes back (and warms the validators up).
      const ok = (await client.callTool({
        name: nameOf('find_code'),
        arguments: { code: 'aaaa' },
      })) as CallToolResult;
      assert.equal(ok.isError, undefined, JSON.stringify(ok));
      assert.deepEqual(ok.content, [{ type: 'text', text: '{"code":"aaaa"}' }]);

      const calling = (evil: (s: string) => string) => {
        const e = evil(`${'a'.repeat(31)}!`);
        return [
          { name: nameOf('find_code'), arguments: { code: e } },
          { name: nameOf('find_code'), arguments: { code: evil(e.repeat(500)) } },
          { name: nameOf('find_words'), arguments: { words: e, kind: 'aa' } },
          {
            name: nameOf('find_words'),
            arguments: { words: 'ok', kind: evil(`${'a'.repeat(45)}!`) },
          },
        ];
      };
      const send = (a: { name: string; arguments: Record<string, unknown> }) =>
        client.callTool(a) as Promise<CallToolResult>;
      const control = await probeDuring(base, calling(defused), send);
      const attack = await probeDuring(
        base,
        calling((s) => s),
        send,
      );
      const slowest = attack.slowest;
      t.diagnostic(
        `slowest /healthz during 4 evil MCP calls: ${slowest.toFixed(1)} ms (control ${control.slowest.toFixed(1)} ms)`,
      );
      for (const result of [...control.answers, ...attack.answers]) {
        assert.equal(result.isError, true, JSON.stringify(result));
        const decision = (result._meta as Record<string, { code?: string }>)['toolgate/decision'];
        assert.equal(decision?.code, 'INPUT_INVALID', JSON.stringify(result));
      }
      assert.ok(
        slowest < control.slowest + HEALTHZ_BUDGET_MS,
        `/healthz took ${slowest.toFixed(1)} ms while evil inputs were checked (control ${control.slowest.toFixed(1)} ms)`,
      );
    });
  });
}
