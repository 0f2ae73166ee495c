/**
 * What the append-only log keeps of a caller's values (docs/security-model.md, "Personal data and
 * the audit log"), attack beside benign neighbour, over REST (and MCP through the official SDK
 * client for probes) on every backend. No detector recognises the values used here (a name, a
 * customer number, a chat handle), so only the masking rule itself keeps them out:
 *
 * - a probe's tool name is kept as its keyed hash, whatever it looks like (REST and MCP), and a
 *   large number in nested lists too;
 * - a map keyed by customers keeps its shape, its keys hashed, while the property names the
 *   tool's schema declares stay readable;
 * - a refusal that quotes a value (case-changed, cut to its first 100 characters, escaped) or
 *   names a caller's key keeps no fragment of it, while messages the gateway wrote alone stay
 *   readable; keys in a pointer are found after `İ` and in `~0`/`~1` escapes;
 * - an egress host the caller chose, and the model the agent reports, are kept as keyed hashes,
 *   while the hosts the tool's definition names stay readable;
 * - a run id the agent chose (an IBAN, a name) is its keyed hash in every record of its run, the
 *   hash the search gives, while a session's own id stays readable;
 * - with no credential at all, a refused Origin or Host (an e-mail, phone, IBAN and name) and an
 *   Mcp-Method header in a mismatch are recorded only as keyed hashes, the peer's address too,
 *   and a flood from one peer writes at most the sample, while a loopback Origin passes;
 * - one value in any case or Unicode compatibility form has one hash, in arguments and messages,
 *   and it is the hash the classified store's search gives;
 * - search and erasure by value refuse blank and short values (REST and the library API) and
 *   change nothing, while a 4-character value works.
 *
 * In every case the value is absent from every row of `audit_log` and `events`, yet an auditor
 * finds the call by the value and the keyed hashes match `tg.audit.writer.pseudonyms.token`.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { AuditPseudonyms } from '../../src/records/audit/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import {
  callRecords,
  connectMcp,
  initializeRequest,
  openWorld,
  restClient,
  type World,
} from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-personal-data-masking-tests-0123456789';
const setup = { id: 'test-admin', via: 'library' } as const;
const HASH = /hmac:[0-9a-f]{32}/g;

// A person's name and a customer number as tool names: no detector knows their shape.
const NAME_AS_TOOL = 'Erika_Mustermann_1964';
const NUMBER_AS_TOOL = 'KD-77341902-Mustermann';
const MCP_NAME_AS_TOOL = 'Rosalind_Franklin_Kundin';
// Customers as the keys of a map the schema leaves open.
const CUSTOMER_KEYS = ['Zimmermann', 'gabriele_schwarzenegger', 'Kontonummer-5512'];
// A chat handle: the refusal quotes it lower-cased.
const HANDLE = '@Hildegard.Knef_Privat';
// Free text longer than the 100 characters a refusal quotes, with letters it escapes (ß, ö).
const LONG =
  'Frau Eleonore Brautigam, Heidestraße 17, 51147 Köln, Kundennummer KD-99887766, ruft wegen Rückerstattung an, Geburtstag 1961';
// Short, with letters a refusal escapes, and a backslash.
const UMLAUTS = 'Grüße an Jürgen Schwarzwälder \\ Büro';
// Their distinctive fragments, each a token of at least 4 characters.
const LONG_FRAGMENTS = ['eleonore', 'brautigam', 'heidestra', '51147', 'kundennummer', '99887766'];
// One address in three spellings: mixed case, lower case, full-width compatibility forms.
const MIXED = 'Wilhelmina.Vanderbilt@Kundschaft.Example';
const FULLWIDTH =
  'ｗｉｌｈｅｌｍｉｎａ．ｖａｎｄｅｒｂｉｌｔ＠ｋｕｎｄｓｃｈａｆｔ．ｅｘａｍｐｌｅ';

for (const backend of backends()) {
  describe(`the audit log keeps nothing a caller supplied readable, on ${backend.name}`, () => {
    let tg: Gateway;
    let inspector: Store;
    let world: World;
    let base = '';
    let apiKey = '';
    let webKey = '';
    let auditorToken = '';
    const clients: Client[] = [];

    const send = restClient(() => base, ADMIN_TOKEN);
    const session = async () => (await send('POST', '/v1/sessions', {}, apiKey)).body.id as string;
    const call = (sid: string, tool: string, args: unknown) =>
      send('POST', `/v1/sessions/${sid}/calls`, { tool, arguments: args }, apiKey);
    const callIdOf = (r: { body: Record<string, unknown> }) =>
      (r.body.call_id ?? (r.body.details as { call_id?: string } | undefined)?.call_id) as string;
    const token = (value: unknown) => tg.audit.writer.pseudonyms.token(value);
    /** Every row of the append-only log and the event record, as one lower-cased text. */
    const everything = async () => {
      await tg.gate.flush();
      const log = await inspector.db.selectFrom('audit_log').selectAll().execute();
      const events = await inspector.db.selectFrom('events').selectAll().execute();
      return JSON.stringify([log, events]).toLowerCase();
    };
    const recordsOf = (callId: string) => callRecords(tg, inspector, callId);
    const firstOf = async (callId: string) => {
      const [first] = await recordsOf(callId);
      assert.ok(first, `no record of ${callId}`);
      return first;
    };
    const search = (value: string) =>
      send('POST', '/v1/audit/classified/search', { value }, auditorToken);
    const mcpClient = async () => {
      const client = await connectMcp(base, apiKey);
      clients.push(client);
      return client;
    };

    before(async () => {
      world = await openWorld({
        backend,
        demo: true,
        actor: setup,
        options: {
          masterKey: MasterKey.generate(),
          detectors: false,
          executor: demoExecutor().register('test.route_notes', () => ({ status: 'ok' })),
        },
        tools: [
          validTool({
            id: 'route_notes',
            name: 'route_notes',
            description: 'File notes about customers and route them to a chat channel.',
            required_capabilities: ['tickets:read'],
            runtime: { kind: 'inline', handler: 'test.route_notes' },
            arguments_policy: { max_argument_bytes: 1024 },
            input_schema: {
              type: 'object',
              additionalProperties: false,
              properties: {
                // A map keyed by customer: its keys are the caller's, not the schema's.
                notes: { type: 'object', additionalProperties: { type: 'string' } },
                channel: { type: 'string', maxLength: 200 },
                priority: { type: 'integer', minimum: 1, maximum: 5 },
              },
            },
            destinations: [{ argument: '/channel', kind: 'chat', allow: { values: ['#support'] } }],
          }),
          validTool({
            id: 'link_customers',
            name: 'link_customers',
            description: 'Attach documentation links to customers, grouped by team.',
            required_capabilities: ['docs:read'],
            egress: { mode: 'constrained', hosts: ['docs.example.com'] },
            runtime: { kind: 'inline', handler: 'test.route_notes' },
            input_schema: {
              type: 'object',
              additionalProperties: false,
              properties: {
                // Team, then customer, then a URL: both keys are the caller's.
                links: {
                  type: 'object',
                  additionalProperties: {
                    type: 'object',
                    additionalProperties: { type: 'string', 'x-toolgate': 'url' },
                  },
                },
              },
            },
          }),
          validTool({
            id: 'open_link',
            name: 'open_link',
            description: 'Open any web page a customer sent and return its title.',
            required_capabilities: ['web:open'],
            data_access: 'public',
            egress: { mode: 'unconstrained' },
            runtime: { kind: 'inline', handler: 'test.route_notes' },
            input_schema: {
              type: 'object',
              additionalProperties: false,
              required: ['url'],
              properties: { url: { type: 'string', 'x-toolgate': 'url' } },
            },
          }),
        ],
        // Its own agent: a session that can read private data is offered no unconstrained egress.
        agents: [{ id: 'web-bot', capabilities: ['web:open'] }],
        keys: ['support-bot'],
        operators: [{ id: 'ines', roles: ['auditor'], token: true }],
        rest: { adminToken: ADMIN_TOKEN },
      });
      ({ tg, base } = world);
      webKey = world.keys['web-bot'] as string;
      apiKey = world.keys['support-bot'] as string;
      auditorToken = world.tokens.ines as string;
      inspector = await openStore(world.db);
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await inspector?.close();
      await world?.close();
    });

    test("REST and MCP: a probe's tool name is kept as its keyed hash, however ordinary it looks", async () => {
      const sid = await session();
      const ids: Record<string, string> = {};
      for (const name of [NAME_AS_TOOL, NUMBER_AS_TOOL, 'no_such_tool']) {
        const r = await call(sid, name, { query: 'x' });
        assert.equal(r.status, 404, JSON.stringify(r.body));
        assert.equal(r.body.code, 'TOOL_NOT_REGISTERED');
        ids[name] = callIdOf(r);
      }
      // A large number in nested lists (an account number) is hashed; a small one is kept.
      const numbers = await call(sid, NUMBER_AS_TOOL, { accounts: [[4711000123, 12]] });
      assert.equal(numbers.status, 404, JSON.stringify(numbers.body));
      const numbersRecord = await firstOf(callIdOf(numbers));
      assert.deepEqual(JSON.parse(numbersRecord.args_redacted ?? 'null'), {
        [token('accounts')]: [[token(4711000123), 12]],
      });
      const client = await mcpClient();
      const viaMcp = await client.callTool({ name: MCP_NAME_AS_TOOL, arguments: { query: 'x' } });
      assert.equal(viaMcp.isError, true);

      const text = await everything();
      for (const name of [NAME_AS_TOOL, NUMBER_AS_TOOL, MCP_NAME_AS_TOOL]) {
        assert.ok(!text.includes(name.toLowerCase()), `${name} is in the append-only log`);
      }
      assert.ok(!text.includes('mustermann') && !text.includes('rosalind'));
      assert.ok(!text.includes('4711000123'));
      // The benign neighbour: each probe is recorded, its name as the hash an investigator who
      // knows the name computes (an ordinary name too, so the detectors can match it).
      for (const [name, callId] of Object.entries(ids)) {
        const record = await firstOf(callId);
        assert.equal(record.kind, 'call.denied');
        assert.equal(JSON.parse(record.details).attempted, token(name), name);
      }
      await tg.gate.flush();
      const mcpProbe = await inspector.db
        .selectFrom('audit_log')
        .select('details')
        .where('kind', '=', 'call.denied')
        .execute();
      assert.ok(
        mcpProbe.some((r) => JSON.parse(r.details).attempted === token(MCP_NAME_AS_TOOL)),
        'the MCP probe is recorded with its hashed name',
      );
    });

    test("a map keyed by customers keeps its shape with hashed keys; the schema's property names stay readable", async () => {
      const sid = await session();
      const notes = Object.fromEntries(CUSTOMER_KEYS.map((k, i) => [k, `note ${i}`]));
      const r = await call(sid, 'route_notes', { notes, channel: '#support', priority: 2 });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const callId = callIdOf(r);

      const text = await everything();
      for (const key of CUSTOMER_KEYS) {
        assert.ok(!text.includes(key.toLowerCase()), `${key} is in the append-only log`);
      }
      const records = await recordsOf(callId);
      assert.deepEqual(
        records.map((x) => x.kind),
        ['call.pre', 'call.post'],
      );
      const kept = JSON.parse(records[0]?.args_redacted ?? 'null') as Record<string, unknown>;
      // Declared names readable, small numbers kept, every caller key and string hashed.
      assert.deepEqual(kept, {
        notes: Object.fromEntries(CUSTOMER_KEYS.map((k, i) => [token(k), token(`note ${i}`)])),
        channel: token('#support'),
        priority: 2,
      });
      // The auditor finds the call by a key's value and sees the same masked copy.
      const found = await search(CUSTOMER_KEYS[1] as string);
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.token, token(CUSTOMER_KEYS[1]));
      const items = found.body.items as { call_id: string; masked: unknown; args: unknown }[];
      assert.deepEqual(
        items.map((i) => i.call_id),
        [callId],
      );
      assert.deepEqual(items[0]?.masked, kept);
      assert.deepEqual(items[0]?.args, { notes, channel: '#support', priority: 2 });
    });

    test("a refusal quoting a value case-changed, cut or escaped, or naming a caller's key, keeps no fragment of it; gateway-written messages stay readable", async () => {
      const sid = await session();
      const handle = await call(sid, 'route_notes', { channel: HANDLE });
      assert.equal(handle.status, 403, JSON.stringify(handle.body));
      assert.equal(handle.body.code, 'DESTINATION_NOT_ALLOWED');
      const long = await call(sid, 'route_notes', { channel: LONG });
      assert.equal(long.status, 403, JSON.stringify(long.body));
      // Quoted with its letters escaped (\u{fc}): hashed as the value, the argument's own hash.
      const escaped = await call(sid, 'route_notes', { channel: UMLAUTS });
      assert.equal(escaped.status, 403, JSON.stringify(escaped.body));
      // Refused by the size policy, which names the (undeclared) argument.
      const keyed = await call(sid, 'route_notes', { Rosenkranz_Liesel: 'x'.repeat(2000) });
      assert.equal(keyed.status, 400, JSON.stringify(keyed.body));
      // Refused by the schema: a message written by the gateway alone, naming declared names.
      const schema = await call(sid, 'route_notes', { priority: 9 });
      assert.equal(schema.status, 400, JSON.stringify(schema.body));

      const text = await everything();
      for (const fragment of [
        'hildegard',
        'knef',
        'privat',
        ...LONG_FRAGMENTS,
        'rosenkranz',
        'liesel',
        'rgen',
        'schwarzw',
      ]) {
        assert.ok(!text.includes(fragment), `${fragment} is in the append-only log`);
      }
      // The refusals are kept, their wording readable and the quoted value as its hash: the same
      // hash as the argument's, since the quote is the value lower-cased (one canonical form).
      const handleRecord = await firstOf(callIdOf(handle));
      assert.equal(handleRecord.kind, 'call.denied');
      assert.equal(
        handleRecord.message,
        `/channel: "${token(HANDLE)}" is not an allowed chat destination (allowed: 1 listed value(s))`,
      );
      assert.equal(JSON.parse(handleRecord.args_redacted ?? 'null').channel, token(HANDLE));
      const longRecord = await firstOf(callIdOf(long));
      assert.match(longRecord.message ?? '', /^\/channel: "hmac:[0-9a-f]{32}"… /);
      assert.match(longRecord.message ?? '', /\(chat destination\)$/);
      const escapedRecord = await firstOf(callIdOf(escaped));
      assert.equal(
        escapedRecord.message,
        `/channel: "${token(UMLAUTS)}" must be printable ASCII (chat destination)`,
      );
      assert.equal(JSON.parse(escapedRecord.args_redacted ?? 'null').channel, token(UMLAUTS));
      const keyedRecord = await firstOf(callIdOf(keyed));
      assert.equal(
        keyedRecord.message,
        `argument "${token('Rosenkranz_Liesel')}" is 2002 bytes; at most 1024 are allowed`,
      );
      assert.deepEqual(JSON.parse(keyedRecord.args_redacted ?? 'null'), {
        [token('Rosenkranz_Liesel')]: token('x'.repeat(2000)),
      });
      const schemaRecord = await firstOf(callIdOf(schema));
      assert.equal(schemaRecord.kind, 'call.denied');
      assert.equal(schemaRecord.code, 'INPUT_INVALID');
      assert.equal(schemaRecord.message, schema.body.message, 'a gateway message is kept as said');
      assert.doesNotMatch(schemaRecord.message ?? '', HASH);
      // The auditor finds the long value's call by a fragment of it, and its hash matches.
      const found = await search('Heidestraße 17');
      assert.deepEqual(
        (found.body.items as { call_id: string }[]).map((i) => i.call_id),
        [callIdOf(long)],
      );
      assert.equal(JSON.parse(longRecord.args_redacted ?? 'null').channel, token(LONG));
    });

    test('a refusal naming caller keys in a pointer keeps none of them, after a character that lower-casing lengthens and in JSON pointer escapes', async () => {
      const sid = await session();
      const cases = [
        // `İ` lower-cases to two units: spans found in a lower-cased copy must not shift.
        { team: 'İİİİ-Kundenteam', customer: 'Mustermann_Erika' },
        // A JSON pointer spells `~` as `~0` and `/` as `~1`.
        { team: 'Vertrieb/Nord', customer: 'Liesel~Rosenkranz' },
      ];
      for (const { team, customer } of cases) {
        const r = await call(sid, 'link_customers', {
          links: { [team]: { [customer]: 'https://evil.example/x' } },
        });
        assert.equal(r.status, 403, JSON.stringify(r.body));
        assert.equal(r.body.code, 'POLICY_DENIED');
        const record = await firstOf(callIdOf(r));
        const spelled = (k: string) => k.replaceAll('~', '~0').replaceAll('/', '~1');
        assert.equal(
          record.message,
          `/links/${token(spelled(team))}/${token(spelled(customer))}: host "${token('evil.example')}" is not allowed for this argument`,
        );
      }
      // The benign neighbour: a link to the tool's own host passes; the host, which the tool
      // declares, stays readable, the caller's keys do not.
      const ok = await call(sid, 'link_customers', {
        links: { Vertrieb: { Mustermann_Erika: 'https://docs.example.com/pages/refunds' } },
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const pre = await firstOf(callIdOf(ok));
      assert.equal(pre.egress_host, 'docs.example.com');
      const text = await everything();
      for (const fragment of [
        'kundenteam',
        'mustermann',
        'erika',
        'vertrieb',
        'nord',
        'liesel',
        'rosenkranz',
        'evil.example',
      ]) {
        assert.ok(!text.includes(fragment), `${fragment} is in the append-only log`);
      }
    });

    test("egress_host keeps the hosts the tool's definition names and hashes a host the caller chose", async () => {
      const webSid = (await send('POST', '/v1/sessions', {}, webKey)).body.id as string;
      const chosen = await send(
        'POST',
        `/v1/sessions/${webSid}/calls`,
        { tool: 'open_link', arguments: { url: 'https://Annegret-Kramp.Example/lebenslauf' } },
        webKey,
      );
      assert.equal(chosen.status, 200, JSON.stringify(chosen.body));
      const pre = await firstOf(callIdOf(chosen));
      assert.equal(pre.kind, 'call.pre');
      // One host, one token: the investigator's hash of the host, in any case, matches it.
      assert.equal(pre.egress_host, token('annegret-kramp.example'));
      assert.equal(pre.egress_host, token('Annegret-Kramp.Example'));
      const text = await everything();
      for (const fragment of ['annegret', 'kramp', 'lebenslauf']) {
        assert.ok(!text.includes(fragment), `${fragment} is in the append-only log`);
      }
      // The benign neighbour: a constrained tool's own host stays readable.
      const sid = await session();
      const named = await call(sid, 'link_customers', {
        links: { Einkauf: { Kunde_Eins: 'https://docs.example.com/pages/a' } },
      });
      assert.equal(named.status, 200, JSON.stringify(named.body));
      assert.equal((await firstOf(callIdOf(named))).egress_host, 'docs.example.com');
    });

    test('the model an agent reports is kept as its keyed hash, since the agent may write anything there', async () => {
      const sid = await session();
      const model = 'Assistent-von-Bertha-Suttner';
      const r = await send(
        'POST',
        `/v1/sessions/${sid}/calls`,
        { tool: 'route_notes', arguments: { priority: 1 }, model },
        apiKey,
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const records = await recordsOf(callIdOf(r));
      assert.deepEqual(
        records.map((x) => [x.kind, x.model]),
        [
          ['call.pre', token(model)],
          ['call.post', token(model)],
        ],
      );
      const text = await everything();
      assert.ok(!text.includes('bertha') && !text.includes('suttner'));
      // The benign neighbour: a call that reports no model records none.
      const plain = await call(sid, 'route_notes', { priority: 1 });
      assert.equal((await firstOf(callIdOf(plain))).model, null);
    });

    test('one value in any case or compatibility form has one hash, in arguments, refusals and the search', async () => {
      const sid = await session();
      const ids: string[] = [];
      for (const spelling of [MIXED, MIXED.toLowerCase(), MIXED.toUpperCase(), FULLWIDTH]) {
        const r = await call(sid, 'route_notes', { notes: { first: spelling } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        ids.push(callIdOf(r));
      }
      // The demo's send_email refuses an outside recipient, quoting it lower-cased.
      const refused = await call(sid, 'send_email', { to: MIXED, subject: 'Hello', body: 'Hi' });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));

      const text = await everything();
      assert.ok(!text.includes('vanderbilt') && !text.includes('wilhelmina'));
      const hash = token(MIXED.toLowerCase());
      for (const id of ids) {
        const kept = JSON.parse((await firstOf(id)).args_redacted ?? 'null');
        assert.equal(kept.notes[token('first')], hash, 'every spelling gives one hash');
      }
      const denied = await firstOf(callIdOf(refused));
      assert.equal(JSON.parse(denied.args_redacted ?? 'null').to, hash);
      assert.ok(denied.message?.includes(`"${hash}"`), denied.message ?? '');
      // The benign neighbour: another value has another hash.
      assert.notEqual(token('wilhelmina.vanderbilt@kundschaft.example.org'), hash);
      // The auditor's search gives that hash, whichever case the value is typed in.
      for (const typed of [MIXED, MIXED.toUpperCase()]) {
        const found = await search(typed);
        assert.equal(found.status, 200, JSON.stringify(found.body));
        assert.equal(found.body.token, hash);
        const callIds = (found.body.items as { call_id: string }[]).map((i) => i.call_id);
        for (const id of [...ids.slice(0, 3), callIdOf(refused)]) assert.ok(callIds.includes(id));
      }
    });

    test("the run id an agent chose is kept as its keyed hash in every record of its run; a session's own id stays readable", async () => {
      // A valid IBAN, and a name with a customer number: both allowed by the run id's pattern.
      const runs = ['DE89370400440532013000', 'Rosa.Luxemburg-Kundin-4711'];
      const opened: [string, string][] = [];
      for (const run of runs) {
        const r = await send('POST', '/v1/sessions', { run_id: run }, apiKey);
        assert.equal(r.status, 201, JSON.stringify(r.body));
        opened.push([run, r.body.id as string]);
      }
      for (const [run, sid] of opened) {
        const allowed = await call(sid, 'route_notes', { priority: 1 });
        assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
        const probe = await call(sid, 'no_such_tool', { query: 'x' });
        assert.equal(probe.status, 404, JSON.stringify(probe.body));
        const records = [
          ...(await recordsOf(callIdOf(allowed))),
          ...(await recordsOf(callIdOf(probe))),
        ];
        assert.deepEqual(
          records.map((x) => [x.kind, x.run_id, x.session_id]),
          [
            ['call.pre', token(run), sid],
            ['call.post', token(run), sid],
            ['call.denied', token(run), sid],
          ],
        );
        // An investigator holding the run id computes the hash the records carry.
        const found = await search(run);
        assert.equal(found.status, 200, JSON.stringify(found.body));
        assert.equal(found.body.token, token(run));
      }
      const text = await everything();
      assert.ok(!text.includes('de89370400440532013000'), 'the IBAN is in the append-only log');
      assert.ok(!text.includes('luxemburg') && !text.includes('kundin-4711'));
      // The benign neighbour: a session opened without a run id is its own run, and that id (the
      // gateway's, not the caller's) stays readable, so a run is still found by its session.
      const sid = await session();
      const plain = await call(sid, 'route_notes', { priority: 1 });
      assert.equal(plain.status, 200, JSON.stringify(plain.body));
      assert.deepEqual(
        (await recordsOf(callIdOf(plain))).map((x) => x.run_id),
        [sid, sid],
      );
    });

    test('a refused Origin or Host sent without any credential is kept only as keyed hashes, and a flood of them writes a bounded number of records', async () => {
      const ORIGIN = 'Jane Q Doe, jane.q.doe@mail.example, +1 415 555 0199, DE89370400440532013000';
      const HOST = 'john-smith-ssn-078-05-1120.example';
      const port = Number(new URL(base).port);
      /** POST /mcp with these headers and no credential at all (node:http lets Host be set). */
      const rawMcp = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(
            {
              host: '127.0.0.1',
              port,
              path: '/mcp',
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                host: `127.0.0.1:${port}`,
                ...headers,
              },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify(initializeRequest('probe')));
        });
      const refused = async () =>
        (
          await inspector.db
            .selectFrom('events')
            .select('details')
            .where('action', '=', 'mcp.origin_refused')
            .orderBy('seq')
            .execute()
        ).map((e) => JSON.parse(e.details) as Record<string, unknown>);
      const before = (await refused()).length;
      assert.equal(await rawMcp({ origin: ORIGIN }), 403);
      assert.equal(await rawMcp({ host: HOST }), 403);
      const recorded = (await refused()).slice(before);
      assert.deepEqual(
        recorded.map((d) => [d.reason, d.value, d.length]),
        [
          ['origin', token(ORIGIN), ORIGIN.length],
          ['host', token(HOST), HOST.length],
        ],
      );
      // Repeats group by the peer's hash; its address is personal data like any other.
      assert.ok(recorded.every((d) => typeof d.remote === 'string' && /^hmac:/.test(d.remote)));
      const text = await everything();
      for (const fragment of ['jane', 'mail.example', '415 555', 'de8937040044', 'john-smith']) {
        assert.ok(!text.includes(fragment), `${fragment} is in the append-only log`);
      }
      // The benign neighbour: a loopback Origin passes the check and is asked for a credential;
      // nothing is recorded.
      assert.equal(await rawMcp({ origin: 'http://localhost:5173' }), 401);
      assert.equal((await refused()).length, before + 2);
      // A flood from one peer writes at most the sample (5 a minute) in full, not one record each.
      for (let i = 0; i < 30; i++) {
        assert.equal(await rawMcp({ origin: `https://flood-${i}.example` }), 403);
      }
      const flood = (await refused()).length - before;
      assert.ok(flood <= 10, `${flood} records for 32 refusals`);
    });

    test('a header mismatch sent without any credential keeps the header values it quotes only as keyed hashes', async () => {
      const METHOD = 'Hedwig.Courths-Mahler@Privat.example';
      const mismatch = async (mcpMethod: string) => {
        const res = await fetch(`${base}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': mcpMethod,
            'mcp-name': 'route_notes',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 7,
            method: 'tools/call',
            params: {
              name: 'route_notes',
              arguments: { priority: 1 },
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {},
                'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              },
            },
          }),
        });
        assert.equal(res.status, 400, await res.text());
      };
      const recorded = async () =>
        (
          await inspector.db
            .selectFrom('events')
            .select('details')
            .where('action', '=', 'mcp.header_mismatch')
            .orderBy('seq')
            .execute()
        ).map((e) => JSON.parse(e.details) as Record<string, unknown>);
      const before = (await recorded()).length;
      await mismatch(METHOD);
      // The benign neighbour: another method named in the header, the gateway's words kept.
      await mismatch('tools/list');
      const [attack, benign] = (await recorded()).slice(before);
      assert.equal(attack?.header, 'Mcp-Method');
      assert.ok(String(attack?.reason).includes(token(METHOD)), JSON.stringify(attack));
      assert.ok(
        String(benign?.reason).includes('tools/call') &&
          String(benign?.reason).includes('tools/list'),
        JSON.stringify(benign),
      );
      assert.ok(/^hmac:/.test(String(attack?.remote)));
      const text = await everything();
      assert.ok(!text.includes('courths') && !text.includes('privat.example'));
    });

    test('search and erasure by value refuse blank and short values and change nothing; four characters work', async () => {
      const sid = await session();
      const kept = await call(sid, 'route_notes', { notes: { first: '    indented code' } });
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      await tg.gate.flush();
      const count = async () =>
        (await inspector.db.selectFrom('call_arguments').select('call_id').execute()).length;
      const classifiedEvents = async () =>
        (await inspector.db.selectFrom('events').select('action').execute()).filter((e) =>
          e.action.startsWith('audit.classified'),
        ).length;
      const rowsBefore = await count();
      const eventsBefore = await classifiedEvents();
      assert.ok(rowsBefore > 1);
      for (const value of [
        '    ',
        '\t \n  ',
        '\u00a0\u00a0\u00a0\u00a0\u00a0',
        '  ab  ',
        'a b c',
      ]) {
        for (const [path, who] of [
          ['/v1/audit/classified/search', auditorToken],
          ['/v1/audit/classified/erase', ADMIN_TOKEN],
        ] as const) {
          const r = await send('POST', path, { value }, who);
          assert.equal(
            r.status,
            400,
            `${path} ${JSON.stringify(value)}: ${JSON.stringify(r.body)}`,
          );
          assert.equal(r.body.code, 'INPUT_INVALID');
        }
        // The library's admin API keeps the same rule.
        for (const run of [
          () => tg.admin.classified.search({ value }, setup),
          () => tg.admin.classified.erase({ value }, setup),
        ]) {
          await assert.rejects(run, { code: 'INPUT_INVALID' }, JSON.stringify(value));
        }
      }
      assert.equal(await count(), rowsBefore, 'nothing was erased');
      assert.equal(await classifiedEvents(), eventsBefore, 'nothing was searched or erased');
      // The benign neighbours: four characters other than blanks, padded or not, work.
      const padded = await search(' indented ');
      assert.equal(padded.status, 200, JSON.stringify(padded.body));
      assert.deepEqual(
        (padded.body.items as { call_id: string }[]).map((i) => i.call_id),
        [callIdOf(kept)],
      );
      const erased = await send('POST', '/v1/audit/classified/erase', { value: 'inde' });
      assert.equal(erased.status, 200, JSON.stringify(erased.body));
      assert.equal(erased.body.erased, 1);
      assert.equal(await count(), rowsBefore - 1);
      const report = await tg.admin.audit.verify();
      assert.equal(report.ok, true, JSON.stringify(report.problems));
    });
  });
}

describe('details deeper than the masking walks are not kept as they are', () => {
  test('a string past the depth limit is masked; one within it goes through the message pass', () => {
    const pseudonyms = AuditPseudonyms.ephemeral();
    const nest = (depth: number, leaf: unknown): unknown =>
      depth === 0 ? leaf : { level: nest(depth - 1, leaf) };
    const text = (v: unknown) => JSON.stringify(v);
    const deep = pseudonyms.maskRecord(
      {
        argsRedacted: undefined,
        details: { trail: nest(40, 'write to jane.roe@customer.example') },
      },
      undefined,
    );
    assert.ok(!text(deep).includes('jane.roe'), text(deep));
    // The benign neighbour: within the limit, the same text keeps its words, the address hashed.
    const shallow = pseudonyms.maskRecord(
      {
        argsRedacted: undefined,
        details: { trail: nest(3, 'write to jane.roe@customer.example') },
      },
      undefined,
    );
    assert.equal(
      text(shallow),
      text({
        argsRedacted: undefined,
        details: {
          trail: nest(3, `write to ${pseudonyms.token('jane.roe@customer.example')}`),
        },
      }),
    );
  });
});
