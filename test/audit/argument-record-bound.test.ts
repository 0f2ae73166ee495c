/**
 * What one call's arguments cost in the audit log and in the gate is bounded, whatever the caller
 * sends (attack round 30, F3; docs/audit.md, "Arguments in the audit log"):
 *
 * - tens of thousands of undeclared keys for a closed schema, a 100,000-element list, and a deep
 *   value within the depth limit each leave a record of a few kilobytes: a summary with the keyed
 *   hash of the whole, the member count, what was left out and a short prefix — never one hash
 *   per member. Over REST and through the library, refused and allowed calls alike; the summary's
 *   hash is the one the classified store's masked copy gives, so an auditor can match the call;
 * - the schema step checks such arguments up to their first error only (one problem, not one per
 *   undeclared key), so the refusal does linear, bounded work;
 * - the benign neighbour is unchanged: a refused call with one undeclared key keeps that key and
 *   its value as keyed hashes, the declared key readable, every problem listed; arguments at the
 *   bound are kept member by member, one member more is summarised.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import {
  MAX_RECORDED_MEMBERS,
  PREFIX_MEMBERS,
  TRUNCATED_KEY,
} from '../../src/records/audit/audit-pseudonyms.js';
import type { Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { callRecords, openWorld, SETUP, type World } from '../support/world.js';

const HASH = /^hmac:[0-9a-f]{32}$/;
/** The largest record any of the attacks below may leave (before the bound: megabytes). */
const MAX_RECORD_BYTES = 8 * 1024;
/** A record kept member by member: at most a hashed key and a hashed value per member. */
const MAX_WHOLE_RECORD_BYTES = MAX_RECORDED_MEMBERS * 84;

interface Summary {
  hash: string;
  members: number;
  omitted: number;
  prefix: unknown;
}

/** `{query: "x", k0: 1, …}`: the attack's arguments, `n` undeclared keys. */
function manyKeys(n: number): Record<string, unknown> {
  const args: Record<string, unknown> = { query: 'x' };
  for (let i = 0; i < n; i++) args[`k${i}`] = 1;
  return args;
}

/** Thirty levels of nesting (within the 32 the gate allows) over `n` keys at the bottom. */
function deepTree(n: number): Record<string, unknown> {
  let node: Record<string, unknown> = manyKeys(n);
  for (let i = 0; i < 30; i++) node = { level: node };
  return node;
}

function summaryOf(argsRedacted: string | null): Summary {
  const parsed = JSON.parse(argsRedacted ?? 'null') as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed), [TRUNCATED_KEY], 'the record is a summary');
  const summary = parsed[TRUNCATED_KEY] as Summary;
  assert.match(summary.hash, HASH);
  return summary;
}

for (const backend of backends()) {
  describe(`one call's arguments cost a bounded audit record, on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    let inspector: Store;
    let apiKey = '';

    const call = async (tool: string, args: unknown) => {
      const sid = (await world.send('POST', '/v1/sessions', {}, apiKey)).body.id as string;
      return world.send('POST', `/v1/sessions/${sid}/calls`, { tool, arguments: args }, apiKey);
    };
    const callIdOf = (r: { body: Record<string, unknown> }) =>
      (r.body.call_id ?? (r.body.details as { call_id?: string } | undefined)?.call_id) as string;
    const recordsOf = async (callId: string, limit = MAX_RECORD_BYTES) => {
      const rows = await callRecords(tg, inspector, callId);
      assert.ok(rows.length > 0, `no record of ${callId}`);
      for (const row of rows) {
        const bytes = Buffer.byteLength(row.args_redacted ?? '');
        assert.ok(bytes <= limit, `${row.kind} keeps ${bytes} bytes of arguments`);
      }
      return rows;
    };
    /** The summary's hash is the classified store's: an auditor matches the call by it. */
    const matchesClassified = async (callId: string, argsRedacted: string | null) => {
      const kept = await tg.admin.classified.read(callId, SETUP);
      assert.deepEqual(kept.masked, JSON.parse(argsRedacted ?? 'null'));
    };

    before(async () => {
      world = await openWorld({
        backend,
        demo: true,
        inspector: true,
        options: {
          masterKey: MasterKey.generate(),
          detectors: false,
          executor: demoExecutor().register('test.bulk', () => ({ status: 'ok' })),
        },
        tools: [
          validTool({
            id: 'bulk_values',
            name: 'bulk_values',
            description: 'Store a list of labels and a free-form tree of settings for a ticket.',
            required_capabilities: ['tickets:read'],
            runtime: { kind: 'inline', handler: 'test.bulk' },
            arguments_policy: { max_argument_bytes: 1_000_000, max_call_bytes: 1_000_000 },
            input_schema: {
              type: 'object',
              additionalProperties: false,
              properties: {
                labels: { type: 'array', items: { type: 'string' } },
                counts: { type: 'array', items: { type: 'integer' } },
                // Open: any keys, at any depth the gate allows.
                settings: { type: 'object' },
              },
            },
          }),
        ],
        keys: ['support-bot'],
        rest: true,
      });
      tg = world.tg;
      inspector = world.inspector as Store;
      apiKey = world.keys['support-bot'] as string;
    });
    after(async () => {
      await world?.close();
    });

    test('REST: 20,000 undeclared keys are refused on the first error, with a record of a few KB', async () => {
      const args = manyKeys(20_000);
      const r = await call('search_tickets', args);
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'INPUT_INVALID');
      const details = r.body.details as { rule: string; problems: unknown[] };
      assert.equal(details.rule, 'schema.additionalProperties');
      // The work done: Ajv stopped at the first undeclared key instead of keeping 20,000 errors.
      assert.equal(details.problems.length, 1);
      const callId = callIdOf(r);
      const [denied] = await recordsOf(callId);
      assert.equal(denied?.kind, 'call.denied');
      const summary = summaryOf(denied?.args_redacted ?? null);
      assert.equal(summary.members, 20_001);
      assert.equal(summary.omitted, 20_001 - PREFIX_MEMBERS);
      const prefix = summary.prefix as Record<string, unknown>;
      assert.equal(Object.keys(prefix).length, PREFIX_MEMBERS);
      assert.equal(prefix.query, tg.audit.writer.pseudonyms.token('x'));
      await matchesClassified(callId, denied?.args_redacted ?? null);
    });

    test('REST: 90,000 undeclared keys (979 KB) are refused by the size limit, with a record of a few KB', async () => {
      const r = await call('search_tickets', manyKeys(90_000));
      assert.equal(r.status, 400);
      assert.equal((r.body.details as { rule: string }).rule, 'size.call');
      const [denied] = await recordsOf(callIdOf(r));
      assert.equal(summaryOf(denied?.args_redacted ?? null).members, 90_001);
    });

    test('REST: a 100,000-element list is refused on its first bad element and summarised', async () => {
      const labels = Array.from({ length: 100_000 }, (_, i) => i);
      const r = await call('bulk_values', { labels });
      assert.equal(r.status, 400);
      const details = r.body.details as { rule: string; problems: { pointer: string }[] };
      assert.equal(details.rule, 'schema.type');
      assert.deepEqual(
        details.problems.map((p) => p.pointer),
        ['/labels/0'],
      );
      const [denied] = await recordsOf(callIdOf(r));
      const summary = summaryOf(denied?.args_redacted ?? null);
      assert.equal(summary.members, 100_001);
      assert.deepEqual(summary.prefix, {
        labels: Array.from({ length: PREFIX_MEMBERS - 1 }, (_, i) => i),
      });
    });

    test('REST: an allowed call with a 100,000-element list keeps summaries in every record', async () => {
      const counts = Array.from({ length: 100_000 }, (_, i) => i);
      const r = await call('bulk_values', { counts });
      assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
      const callId = callIdOf(r);
      const rows = await recordsOf(callId);
      assert.ok(rows.some((row) => row.kind === 'call.pre'));
      for (const row of rows) {
        if (row.args_redacted !== null) assert.equal(summaryOf(row.args_redacted).members, 100_001);
      }
    });

    test('library: deep arguments within the limits, open to any key, keep a summary', async () => {
      const session = await tg.sessions.open('support-bot');
      const ctx = { agentId: 'support-bot', sessionId: session.id };
      const decision = await tg.gate.invoke(ctx, 'bulk_values', { settings: deepTree(20_000) });
      assert.equal(decision.kind, 'allow', JSON.stringify(decision).slice(0, 300));
      const rows = await recordsOf(decision.callId);
      const pre = rows.find((row) => row.kind === 'call.pre');
      const summary = summaryOf(pre?.args_redacted ?? null);
      assert.equal(summary.members, 20_001 + 31);
      const refused = await tg.gate.invoke(ctx, 'search_tickets', manyKeys(20_000));
      assert.equal(refused.kind, 'deny');
      const [denied] = await recordsOf(refused.callId);
      assert.equal(summaryOf(denied?.args_redacted ?? null).members, 20_001);
    });

    test('benign: one undeclared card number keeps the key and value hashed, every problem listed', async () => {
      const token = (v: unknown) => tg.audit.writer.pseudonyms.token(v);
      const r = await call('search_tickets', { query: 'x', card: 4111111111111111 });
      assert.equal(r.status, 400);
      assert.equal((r.body.details as { problems: unknown[] }).problems.length, 1);
      const [denied] = await recordsOf(callIdOf(r));
      assert.deepEqual(JSON.parse(denied?.args_redacted ?? 'null'), {
        query: token('x'),
        [token('card')]: token(4111111111111111),
      });
      // Three undeclared keys, three problems: small arguments still get every error.
      const three = await call('search_tickets', { query: 'x', a: 1, b: 2, c: 3 });
      assert.equal((three.body.details as { problems: unknown[] }).problems.length, 3);
    });

    test('at the bound the arguments are kept member by member; one member more is summarised', async () => {
      const at = await call('search_tickets', manyKeys(MAX_RECORDED_MEMBERS - 1));
      const [kept] = await recordsOf(callIdOf(at), MAX_WHOLE_RECORD_BYTES);
      const whole = JSON.parse(kept?.args_redacted ?? 'null') as Record<string, unknown>;
      assert.equal(Object.keys(whole).length, MAX_RECORDED_MEMBERS);
      assert.ok(!(TRUNCATED_KEY in whole));
      const over = await call('search_tickets', manyKeys(MAX_RECORDED_MEMBERS));
      const [summarised] = await recordsOf(callIdOf(over));
      assert.equal(summaryOf(summarised?.args_redacted ?? null).members, MAX_RECORDED_MEMBERS + 1);
    });
  });
}
