/**
 * One user of an agent holds at most a share of the agent's session slots (docs/operations.md
 * "Limits and overload"): past it that user's open is LIMIT_REACHED (`sessions_per_user`), while
 * another user of the same agent and the agent's own key still open theirs. On MCP 2026-07-28 the
 * agent's cap is the same structured refusal as on REST and the 2025 era (-32062, 429,
 * Retry-After), never an internal error. Fair eviction never ends a session whose call waits on a
 * person's approval (attack round 12, N2) while its principal holds no more than its share (attack
 * round 13, P1), on REST and on the MCP 2025 front's own count alike. JWTs signed here with a local JWKS.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { heldCalls, holdCall, holdTool, noteTool, validTool } from '../support/tools.js';
import {
  actForJwt,
  actForToken,
  initializeRequest,
  MODERN_ENVELOPE,
  openWorld,
  postMcp,
  type SigningKey,
  signingKeyWithJwks,
  type World,
} from '../support/world.js';

const ISSUER = 'https://idp.example.com';
const AUDIENCE = 'toolgate';
const CAP = 4;

let dir: string;
let privateKey: SigningKey;
let world: World;
let entered = 0;
const held = heldCalls(() => entered++);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-user-share-'));
  privateKey = await signingKeyWithJwks(join(dir, 'jwks.json'));
  world = await openWorld({
    options: {
      db: `sqlite:${join(dir, 'tg.db')}`,
      caps: { maxSessionsPerAgent: CAP },
      executor: held.executor,
      jwt: actForJwt(dir, ISSUER, AUDIENCE),
    },
    tools: [validTool(), noteTool({ text: { type: 'string' } }), holdTool()],
    agents: [
      { id: 'bot', capabilities: ['billing:read'] },
      { id: 'bot2', capabilities: ['billing:read'] },
      { id: 'bot3', capabilities: ['billing:read'] },
      { id: 'bot4', capabilities: ['billing:read', 'note:send'] },
      { id: 'bot5', capabilities: ['billing:read', 'note:send'] },
      { id: 'bot6', capabilities: ['billing:read', 'docs:read'] },
      { id: 'bot7', capabilities: ['billing:read', 'note:send'] },
      { id: 'bot8', capabilities: ['billing:read', 'note:send'] },
    ],
    rest: { mcp: { maxSessionsPerAgent: CAP } },
  });
  await world.tg.config.apply(
    ['u1', 'u2', 'u3'].map((id) => ({ kind: 'User', spec: { id, permissions: ['billing:read'] } })),
    world.admin,
  );
});

after(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function tokenFor(user: string, agent = 'bot'): Promise<string> {
  return actForToken(privateKey, agent, user, ISSUER, AUDIENCE);
}

async function modernList(token: string) {
  const res = await postMcp(
    world.base,
    { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: MODERN_ENVELOPE } },
    token,
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
  );
  const body = (await res.json()) as {
    error?: { code: number; message: string; data?: { code?: string; details?: unknown } };
    result?: { tools: unknown[] };
  };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}

test('one user takes at most half the slots; another user and the key still open theirs', async () => {
  const u1 = await tokenFor('u1');
  const mine: string[] = [];
  for (let i = 0; i < CAP / 2; i++) {
    const r = await world.send('POST', '/v1/sessions', {}, u1);
    assert.equal(r.status, 201, r.text);
    mine.push(String(r.body.id));
  }
  const refused = await world.send('POST', '/v1/sessions', {}, await tokenFor('u1'));
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '30');
  assert.equal(refused.body.code, 'LIMIT_REACHED');
  assert.deepEqual(refused.body.details, {
    limit: 'sessions_per_user',
    max: CAP / 2,
    retryAfterSeconds: 30,
  });
  assert.match(String(refused.body.message), /user u1/);

  // Benign neighbours: another user of the agent, and the agent's own key.
  const other = await world.send('POST', '/v1/sessions', {}, await tokenFor('u2'));
  assert.equal(other.status, 201, other.text);
  const keyed = await world.send('POST', '/v1/sessions', {}, world.keys.bot);
  assert.equal(keyed.status, 201, keyed.text);

  // The agent is now at its cap. Its key, holding less than u1, still opens one: u1's least
  // recently used session makes room (fair eviction, attack round 11 F5).
  const keyed2 = await world.send('POST', '/v1/sessions', {}, world.keys.bot);
  assert.equal(keyed2.status, 201, keyed2.text);

  // The key now holds the most: MCP 2026-07-28 says the cap is reached as REST and 2025 do.
  const full = await modernList(world.keys.bot ?? '');
  assert.equal(full.status, 429, JSON.stringify(full.body));
  assert.equal(full.retryAfter, '30');
  assert.equal(full.body.error?.code, -32062);
  assert.equal(full.body.error?.data?.code, 'LIMIT_REACHED');
  assert.deepEqual(full.body.error?.data?.details, {
    limit: 'sessions_per_agent',
    max: CAP,
    retryAfterSeconds: 30,
  });

  // A freed slot lets the same request through.
  assert.equal((await world.send('DELETE', `/v1/sessions/${mine[1]}`, undefined, u1)).status, 204);
  const listed = await modernList(world.keys.bot ?? '');
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.ok((listed.body.result?.tools.length ?? 0) > 0);
});

test('two users fill the cap; a third user and the key still open, each ending the least recently used session of a biggest holder', async () => {
  const open = async (token: string | undefined) => world.send('POST', '/v1/sessions', {}, token);
  const view = async (id: string | undefined, token: string) =>
    (await world.send('GET', `/v1/sessions/${id}/tools`, undefined, token)).status;
  const [t1 = '', t2 = '', t3 = ''] = await Promise.all(
    ['u1', 'u2', 'u3'].map((u) => tokenFor(u, 'bot2')),
  );
  const ids: Record<string, string> = {};
  for (const [name, token] of [
    ['a1', t1],
    ['a2', t1],
    ['b1', t2],
    ['b2', t2],
  ] as const) {
    const r = await open(token);
    assert.equal(r.status, 201, r.text);
    ids[name] = String(r.body.id);
  }
  // a1 is used after the others were opened: a2 is u1's and the agent's least recently used.
  assert.equal(await view(ids.a1, t1), 200);

  // Attack: u1, a biggest holder (and at its share), opens another: refused as before.
  const own = await open(t1);
  assert.equal(own.status, 429);
  assert.equal(own.body.code, 'LIMIT_REACHED');

  // Benign neighbours: a third user, then the agent's own key, each get a session.
  const third = await open(t3);
  assert.equal(third.status, 201, third.text);
  assert.equal(await view(ids.a2, t1), 404, 'the LRU session of a biggest holder ended');
  assert.equal(await view(ids.a1, t1), 200, 'a recently used one stays');
  const key = (await world.tg.keys.issue('bot2', world.admin)).apiKey;
  const keyed = await open(key);
  assert.equal(keyed.status, 201, keyed.text);
  assert.equal(await view(ids.b1, t2), 404, 'u2 held the most: its LRU session ended');
  assert.equal(await view(ids.b2, t2), 200);

  // Everyone now holds one: whoever asks is a biggest holder, and is refused.
  const again = await open(key);
  assert.equal(again.status, 429);
  assert.equal(again.headers.get('retry-after'), '30');
  assert.deepEqual(again.body.details, {
    limit: 'sessions_per_agent',
    max: CAP,
    retryAfterSeconds: 30,
  });

  // Each eviction is on the audited record, as a revocation is.
  const evicted = (await world.tg.events.list({ limit: 100 }))
    .filter((e) => e.action === 'session.evicted')
    .map((e) => JSON.parse(e.details) as Record<string, unknown>)
    .filter((d) => d.agent_id === 'bot2');
  assert.deepEqual(evicted, [
    { agent_id: 'bot2', reason: 'evicted_for_fairness' },
    { agent_id: 'bot2', reason: 'evicted_for_fairness' },
  ]);
});

test('MCP 2025: two users fill the MCP sessions of an agent; a third user still connects, ending the LRU session of a biggest holder', async () => {
  const init = async (token: string) => {
    const res = await postMcp(world.base, initializeRequest(), token);
    await res.text();
    return { status: res.status, id: res.headers.get('mcp-session-id') };
  };
  const [t1 = '', t2 = '', t3 = ''] = await Promise.all(
    ['u1', 'u2', 'u3'].map((u) => tokenFor(u, 'bot3')),
  );
  const held = [await init(t1), await init(t1), await init(t2), await init(t2)];
  for (const h of held) assert.equal(h.status, 200);
  // A biggest holder at its share is refused; a third user is not.
  assert.equal((await init(t1)).status, 429);
  const third = await init(t3);
  assert.equal(third.status, 200);
  assert.ok(third.id);
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
  const gone = await postMcp(world.base, list, t1, {
    'mcp-session-id': held[0]?.id ?? '',
    'mcp-protocol-version': '2025-06-18',
  });
  await gone.text();
  assert.equal(gone.status, 404, "u1's least recently used MCP session ended");
});

test('fair eviction spares a session waiting on an approval: another idle one ends, and with none the newcomer is refused', async () => {
  const key = world.keys.bot4 ?? '';
  const open = async (token: string) => world.send('POST', '/v1/sessions', {}, token);
  const view = async (id: string, token: string) =>
    (await world.send('GET', `/v1/sessions/${id}/tools`, undefined, token)).status;
  const waitOnApproval = async (id: string) => {
    const r = await world.send(
      'POST',
      `/v1/sessions/${id}/calls`,
      { tool: 'send_note', arguments: { text: `note for ${id}` } },
      key,
    );
    assert.equal(r.status, 202, r.text);
    return String(r.body.approval_id);
  };
  const ids: string[] = [];
  let approval = '';
  for (let i = 0; i < CAP; i++) {
    const r = await open(key);
    assert.equal(r.status, 201, r.text);
    ids.push(String(r.body.id));
    // Attack: the key's oldest session waits on a person, and is used again seconds later.
    if (i === 0) approval = await waitOnApproval(String(r.body.id));
  }
  const [s0 = '', s1 = '', s2 = '', s3 = ''] = ids;
  assert.equal(await view(s0, key), 200);

  // A user of the host app opens one: the key's least recently used idle session ends (the benign
  // neighbour: fairness still evicts), never the one waiting on the approval.
  const u1 = await open(await tokenFor('u1', 'bot4'));
  assert.equal(u1.status, 201, u1.text);
  assert.equal(await view(s0, key), 200, 'the session waiting on a person stays');
  assert.equal(await view(s1, key), 404, 'an idle session of the biggest holder ended');
  assert.equal((await world.tg.approvals.get(approval)).status, 'pending', 'not withdrawn');

  // Attack (round 13, P1): every session of the biggest holder now waits on a person, and it
  // holds more than its share (3 of 4, share 2). Waiting protects a principal's sessions only
  // within its share: the newcomer gets a slot, and one waiting session of the holder ends.
  await waitOnApproval(s2);
  await waitOnApproval(s3);
  const u2 = await open(await tokenFor('u2', 'bot4'));
  assert.equal(u2.status, 201, u2.text);
  const alive = [];
  for (const id of [s0, s2, s3]) if ((await view(id, key)) === 200) alive.push(id);
  assert.equal(alive.length, 2, 'the holder keeps its share of waiting sessions');

  // Benign neighbour: the holder is at its share and all of it waits on a person, and u2 holds as
  // many as every other holder that could yield: u2's next open is refused, and nothing the
  // holder waits on ends.
  const refused = await open(await tokenFor('u2', 'bot4'));
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.headers.get('retry-after'), '30');
  assert.deepEqual(refused.body.details, {
    limit: 'sessions_per_agent',
    max: CAP,
    retryAfterSeconds: 30,
  });
  for (const id of alive) assert.equal(await view(id, key), 200);
});

test('MCP 2025: fair eviction spares an MCP session whose call waits on an approval', async () => {
  const key = world.keys.bot5 ?? '';
  const era = { 'mcp-protocol-version': '2025-06-18' };
  const rpc = async (id: string, method: string, params: unknown) => {
    const res = await postMcp(world.base, { jsonrpc: '2.0', id: 2, method, params }, key, {
      'mcp-session-id': id,
      ...era,
    });
    return { status: res.status, text: await res.text() };
  };
  const held: string[] = [];
  for (let i = 0; i < CAP; i++) {
    const res = await postMcp(world.base, initializeRequest(), key);
    await res.text();
    assert.equal(res.status, 200);
    held.push(res.headers.get('mcp-session-id') ?? '');
  }
  const [m0 = '', m1 = ''] = held;
  // Attack: the oldest session's call waits on a person; a user of the host app connects.
  const call = await rpc(m0, 'tools/call', { name: 'send_note', arguments: { text: m0 } });
  assert.match(call.text, /approval_id/);
  // The others are used after it: m0 is the key's least recently used session, m1 the next.
  for (const id of held.slice(1)) assert.equal((await rpc(id, 'tools/list', {})).status, 200);
  const res = await postMcp(world.base, initializeRequest(), await tokenFor('u1', 'bot5'));
  await res.text();
  assert.equal(res.status, 200);
  assert.equal((await rpc(m0, 'tools/list', {})).status, 200, 'the waiting session stays');
  // Benign neighbour: the key's least recently used idle session ended for fairness.
  assert.equal((await rpc(m1, 'tools/list', {})).status, 404, 'an idle session ended');

  // Attack (round 13, P1, on the 2025 front's own count): every MCP session of the key now waits
  // on a person and it holds more than its share (3 of 4, share 2). Waiting spares a principal's
  // sessions only within its share: a second user connects, and one waiting session ends.
  const [, , m2 = '', m3 = ''] = held;
  for (const id of [m2, m3]) {
    const parked = await rpc(id, 'tools/call', { name: 'send_note', arguments: { text: id } });
    assert.match(parked.text, /approval_id/);
  }
  const second = await postMcp(world.base, initializeRequest(), await tokenFor('u2', 'bot5'));
  await second.text();
  assert.equal(second.status, 200, 'a user below her share connects');
  const alive: string[] = [];
  for (const id of [m0, m2, m3])
    if ((await rpc(id, 'tools/list', {})).status === 200) alive.push(id);
  assert.equal(alive.length, 2, 'the key keeps its share of waiting sessions');

  // Benign neighbour: the key is at its share and all of it waits, and u2 holds as many as every
  // other holder that could yield: u2's next session is refused (-32062, Retry-After 30), and
  // nothing the key waits on ends.
  const refused = await postMcp(world.base, initializeRequest(), await tokenFor('u2', 'bot5'));
  const body = (await refused.json()) as { error?: { code: number; data?: { code?: string } } };
  assert.equal(refused.status, 429, JSON.stringify(body));
  assert.equal(refused.headers.get('retry-after'), '30');
  assert.equal(body.error?.code, -32062);
  assert.equal(body.error?.data?.code, 'LIMIT_REACHED');
  for (const id of alive) assert.equal((await rpc(id, 'tools/list', {})).status, 200);
});

test('a holder at its share whose sessions all wait does not switch fair eviction off: a smaller holder yields instead', async () => {
  const key = world.keys.bot7 ?? '';
  const open = async (token: string) => world.send('POST', '/v1/sessions', {}, token);
  const status = async (id: string) =>
    String((await world.send('GET', `/v1/sessions/${id}`)).body.status);
  const parked: string[] = [];
  for (let i = 0; i < CAP / 2; i++) {
    const r = await open(key);
    assert.equal(r.status, 201, r.text);
    const id = String(r.body.id);
    const call = await world.send(
      'POST',
      `/v1/sessions/${id}/calls`,
      { tool: 'send_note', arguments: { text: `note for ${id}` } },
      key,
    );
    assert.equal(call.status, 202, call.text);
    parked.push(id);
  }
  const u1 = await open(await tokenFor('u1', 'bot7'));
  const u2 = await open(await tokenFor('u2', 'bot7'));
  assert.equal(u1.status, 201, u1.text);
  assert.equal(u2.status, 201, u2.text);

  // Attack (round 14, Q1): the keys hold their share (2 of 4), all waiting on a person; the
  // biggest holder has nothing to yield. A newcomer is still let in: a smaller holder holding
  // more than it (u1, least recently used) yields its idle session.
  const u3 = await open(await tokenFor('u3', 'bot7'));
  assert.equal(u3.status, 201, u3.text);
  assert.equal(await status(String(u1.body.id)), 'closed', "u1's idle session ended");
  assert.equal(await status(String(u2.body.id)), 'open');
  for (const id of parked) assert.equal(await status(id), 'open', 'the waiting sessions stay');

  // Benign neighbour: a principal holding as many as every smaller holder is refused as before.
  const again = await open(await tokenFor('u3', 'bot7'));
  assert.equal(again.status, 429, again.text);
  assert.equal(again.body.code, 'LIMIT_REACHED');
});

test('MCP 2025: a holder at its share whose MCP sessions all wait does not switch fair eviction off', async () => {
  const key = world.keys.bot8 ?? '';
  const era = { 'mcp-protocol-version': '2025-06-18' };
  const init = async (token: string) => {
    const res = await postMcp(world.base, initializeRequest(), token);
    await res.text();
    return { status: res.status, id: res.headers.get('mcp-session-id') ?? '' };
  };
  const rpc = async (id: string, token: string, method: string, params: unknown) => {
    const res = await postMcp(world.base, { jsonrpc: '2.0', id: 2, method, params }, token, {
      'mcp-session-id': id,
      ...era,
    });
    return { status: res.status, text: await res.text() };
  };
  for (let i = 0; i < CAP / 2; i++) {
    const s = await init(key);
    assert.equal(s.status, 200);
    const parked = await rpc(s.id, key, 'tools/call', {
      name: 'send_note',
      arguments: { text: s.id },
    });
    assert.match(parked.text, /approval_id/);
  }
  const [t1, t2, t3] = await Promise.all(['u1', 'u2', 'u3'].map((u) => tokenFor(u, 'bot8')));
  const u1 = await init(t1 ?? '');
  const u2 = await init(t2 ?? '');
  assert.equal(u1.status, 200);
  assert.equal(u2.status, 200);
  // Attack (round 14, Q1) on the MCP front's own count: a newcomer still connects, u1's least
  // recently used idle MCP session ends.
  const u3 = await init(t3 ?? '');
  assert.equal(u3.status, 200, 'a newcomer connects');
  assert.equal((await rpc(u1.id, t1 ?? '', 'tools/list', {})).status, 404, "u1's session ended");
  assert.equal((await rpc(u2.id, t2 ?? '', 'tools/list', {})).status, 200);
});

test('fair eviction spares a session with a call in flight: the next least recently used one ends', async () => {
  const key = world.keys.bot6 ?? '';
  const open = async (token: string) => world.send('POST', '/v1/sessions', {}, token);
  const view = async (id: string) =>
    (await world.send('GET', `/v1/sessions/${id}/tools`, undefined, key)).status;
  const ids: string[] = [];
  for (let i = 0; i < CAP; i++) {
    const r = await open(key);
    assert.equal(r.status, 201, r.text);
    ids.push(String(r.body.id));
  }
  const [s0 = '', s1 = ''] = ids;
  held.closeLatch();
  const before = entered;
  const running = holdCall(world.base, key, s0);
  await held.until(() => entered > before);
  for (const id of ids.slice(1)) assert.equal(await view(id), 200);
  // s0's call runs: it is the key's least recently used session, and is spared.
  const u1 = await open(await tokenFor('u1', 'bot6'));
  assert.equal(u1.status, 201, u1.text);
  assert.equal(await view(s1), 404, 'the next least recently used session ended');
  held.release();
  assert.equal((await running).status, 200);
  assert.equal(await view(s0), 200, 'the session whose call ran stays');
});
