/**
 * @module Attack round 9 F4: two offered names that differ only in case (an admin's internal tool
 * `Get_Order` beside `get_order`) are one name to a model or a client that folds case, as an
 * upstream listing two such names is refused at import (docs/tools-and-catalog.md, "Names the
 * model sees"). Neither is offered, on the 2025-11-25 and 2026-07-28 MCP fronts and REST
 * (`?format=openai` too); a call by either name is `TOOL_NOT_REGISTERED`; admins see both in the
 * session's withheld list with the reason. The benign neighbour: names that differ by more than
 * case (`get-order`) stay offered and each calls its own tool.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { inlineTool } from '../support/tools.js';
import { connectBothEras, openWorld, restClient, type World } from '../support/world.js';

const tool = (id: string, name: string, capability: string) =>
  inlineTool(id, { name, access_tier: 'public', required_capabilities: [capability] });

type Result = { _meta?: Record<string, unknown> };

/** What a call by `name` reached: the tool id the gate allowed, else the refusal's code. */
async function reached(client: Client, name: string): Promise<string> {
  const r = (await client.callTool({ name, arguments: {} })) as Result;
  const decision = (r._meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
  return String(decision.kind === 'allow' ? decision.tool : decision.code);
}

describe('two offered names differing only in case (attack round 9 F4)', () => {
  let world: World;
  const clients: { close(): Promise<void> }[] = [];

  before(async () => {
    world = await openWorld({
      rest: true,
      tools: [
        tool('get_order', 'get_order', 'orders:read'),
        tool('order_dash', 'get-order', 'orders:read'),
        tool('shadow_case', 'Get_Order', 'shadow:read'),
      ],
      agents: [
        { id: 'plain', capabilities: ['orders:read'] },
        { id: 'folded', capabilities: ['orders:read', 'shadow:read'] },
      ],
    });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await world.close();
  });

  function eras(agent: string): Promise<(readonly [string, Client])[]> {
    return connectBothEras<Client>(world.base, world.keys[agent], 'case-names', clients);
  }

  test('names that differ by more than case are both offered and each calls its own tool', async () => {
    for (const [era, client] of await eras('plain')) {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['get-order', 'get_order'], era);
      assert.equal(await reached(client, 'get_order'), 'get_order', era);
      assert.equal(await reached(client, 'get-order'), 'order_dash', era);
    }
  });

  test('MCP, both eras: neither case-only twin is offered nor callable; the neighbour is', async () => {
    for (const [era, client] of await eras('folded')) {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(names, ['get-order'], era);
      for (const name of ['get_order', 'Get_Order', 'GET_ORDER', 'shadow_case']) {
        assert.equal(await reached(client, name), 'TOOL_NOT_REGISTERED', `${era} ${name}`);
      }
      assert.equal(await reached(client, 'get-order'), 'order_dash', era);
    }
  });

  test('REST: neither is listed (openai format too) nor callable; admins see both withheld with the reason', async () => {
    const send = restClient(() => world.base, world.keys.folded);
    const session = await send('POST', '/v1/sessions', {});
    assert.equal(session.status, 201, session.text);
    const id = session.body.id as string;
    const opened = (session.body.tools as { name: string }[]).map((t) => t.name);
    assert.deepEqual(opened, ['get-order']);
    const openai = await send('GET', `/v1/sessions/${id}/tools?format=openai`);
    const fns = (openai.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    assert.deepEqual(fns, ['get-order']);
    for (const name of ['get_order', 'Get_Order']) {
      const call = await send('POST', `/v1/sessions/${id}/calls`, { tool: name, arguments: {} });
      assert.equal(call.status, 404, `${name}: ${call.text}`);
      assert.equal((call.body as { code?: string }).code, 'TOOL_NOT_REGISTERED', name);
    }
    const view = await world.send('GET', `/v1/sessions/${id}`);
    const withheld = view.body.withheld as { id: string; reason: string }[];
    assert.deepEqual(withheld.map((w) => w.id).sort(), ['get_order', 'shadow_case']);
    for (const w of withheld) assert.match(w.reason, /differ only in case/, JSON.stringify(w));
  });
});
