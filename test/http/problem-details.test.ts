/**
 * @module Errors as RFC 9457 problem details on request: with `Accept: application/problem+json`
 * the REST front answers `application/problem+json` with type, title, status, detail and instance,
 * the same `code` and the same `details`; without it the body is `{ code, message, details }`
 * exactly as before. Checked for a schema error (400), no credential (401), a role refused (403),
 * an unknown route and an unknown tool (404), a cap (429, its Retry-After kept), and a call the
 * gate denied; /mcp answers the same whatever the Accept header asks for.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ERROR_CODES, type ErrorCode } from '../../src/core/index.js';
import { prefersProblemDetails } from '../../src/core/problem-details.js';
import { initializeRequest, mcpHeaders, openWorld, type World } from '../support/world.js';

const PROBLEM = 'application/problem+json';

let world: World;
before(async () => {
  world = await openWorld({
    demo: true,
    keys: ['support-bot'],
    operators: [{ id: 'watcher', roles: ['auditor'], token: true }],
    // One open session per agent: the second is the 429 below.
    options: { caps: { maxSessionsPerAgent: 1, userSessionShare: 1 } },
    rest: true,
  });
});
after(() => world.close());

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly retryAfter: string | null;
  readonly body: Record<string, unknown>;
}

async function ask(
  method: string,
  path: string,
  { token, body, accept }: { token?: string | null; body?: unknown; accept?: string } = {},
): Promise<Answer> {
  const bearer = token === undefined ? world.adminToken : token;
  const res = await fetch(`${world.base}${path}`, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(accept === undefined ? {} : { accept }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

/**
 * Asks twice, as a client of the default shape and as one of problem details, and checks that
 * both say the same error: the default body unchanged, the problem's members derived from it.
 */
async function bothShapes(
  method: string,
  path: string,
  expect: { status: number; code: ErrorCode },
  options: { token?: string | null; body?: unknown } = {},
): Promise<{ plain: Answer; problem: Answer }> {
  const plain = await ask(method, path, options);
  const problem = await ask(method, path, { ...options, accept: PROBLEM });
  assert.equal(plain.status, expect.status, JSON.stringify(plain.body));
  assert.match(plain.type, /^application\/json/);
  assert.deepEqual(Object.keys(plain.body).sort(), ['code', 'details', 'message']);
  assert.equal(plain.body.code, expect.code);

  assert.equal(problem.status, expect.status);
  assert.match(problem.type, /^application\/problem\+json/);
  // Each call the gate decides has its own id; everything else is the same error.
  const sameCall = (answer: Answer) => {
    const details = answer.body.details as { call_id?: unknown };
    if (typeof details.call_id === 'string') answer.body.details = { ...details, call_id: 'call' };
  };
  sameCall(plain);
  sameCall(problem);
  assert.deepEqual(problem.body, {
    type: `https://toolgate.dev/errors/${expect.code}`,
    title: ERROR_CODES[expect.code].summary,
    status: expect.status,
    detail: plain.body.message,
    instance: path.split('?')[0],
    code: expect.code,
    details: plain.body.details,
  });
  assert.equal(problem.retryAfter, plain.retryAfter);
  return { plain, problem };
}

test('400: a request that does not match its schema, with the problems listed', async () => {
  const { problem } = await bothShapes('GET', '/v1/tools?lifecycle=bogus', {
    status: 400,
    code: 'INPUT_INVALID',
  });
  const problems = (problem.body.details as { problems: { pointer: string }[] }).problems;
  assert.deepEqual(
    problems.map((p) => p.pointer),
    ['/query/lifecycle'],
  );
});

test('401: no credential', async () => {
  await bothShapes('GET', '/v1/tools', { status: 401, code: 'UNAUTHENTICATED' }, { token: null });
});

test('403: an operator whose roles do not cover the action', async () => {
  await bothShapes(
    'POST',
    '/v1/operators',
    { status: 403, code: 'FORBIDDEN' },
    { token: world.tokens.watcher ?? '', body: { id: 'someone', roles: ['admin'] } },
  );
});

test('404: an unknown route (the not-found handler) and an unknown tool (the error handler)', async () => {
  await bothShapes('GET', '/v1/no-such-route', { status: 404, code: 'NOT_FOUND' });
  await bothShapes('GET', '/v1/tools/no_such_tool', { status: 404, code: 'TOOL_NOT_FOUND' });
});

test('429: a cap, with its Retry-After in both shapes; and a call the gate denies', async () => {
  const key = world.keys['support-bot'] ?? '';
  const opened = await ask('POST', '/v1/sessions', { token: key, body: {} });
  assert.equal(opened.status, 201);
  const { plain } = await bothShapes(
    'POST',
    '/v1/sessions',
    { status: 429, code: 'LIMIT_REACHED' },
    { token: key, body: {} },
  );
  assert.equal(plain.retryAfter, '30');
  // The gate's refusal is rendered by the session route (sendDecision), not the error handler.
  await bothShapes(
    'POST',
    `/v1/sessions/${opened.body.id}/calls`,
    { status: 404, code: 'TOOL_NOT_REGISTERED' },
    { token: key, body: { tool: 'no_such_tool', arguments: {} } },
  );
});

test('/mcp answers the same whether or not the Accept header asks for problem details', async () => {
  const post = async (token: string | null, accept: string) => {
    const res = await fetch(`${world.base}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders(token), accept },
      body: JSON.stringify(initializeRequest()),
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type'), text };
  };
  const plainAccept = 'application/json, text/event-stream';
  const withProblem = `${plainAccept}, ${PROBLEM}`;
  // Refused before MCP begins (no credential), and a malformed request.
  const refused = await post(null, plainAccept);
  assert.equal(refused.status, 401);
  assert.deepEqual(await post(null, withProblem), refused);
  const noSession = async (accept: string) => {
    const res = await fetch(`${world.base}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders(world.keys['support-bot']), accept },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    return { status: res.status, type: res.headers.get('content-type'), body: await res.json() };
  };
  const plain = await noSession(plainAccept);
  assert.equal((plain.body as { jsonrpc?: string }).jsonrpc, '2.0');
  assert.deepEqual(await noSession(withProblem), plain);
});

test('who asks for problem details: the media type named, with a weight above 0 and not below application/json', () => {
  assert.equal(prefersProblemDetails(undefined), false);
  assert.equal(prefersProblemDetails('*/*'), false);
  assert.equal(prefersProblemDetails('application/json'), false);
  assert.equal(prefersProblemDetails('application/problem+json'), true);
  assert.equal(prefersProblemDetails('Application/Problem+JSON'), true);
  assert.equal(prefersProblemDetails('application/json, application/problem+json'), true);
  assert.equal(prefersProblemDetails('application/problem+json;q=0'), false);
  assert.equal(prefersProblemDetails('application/problem+json;q=0.5, application/json'), false);
  assert.equal(prefersProblemDetails('application/problem+json, application/json;q=0.9'), true);
  assert.equal(prefersProblemDetails('application/problem+json;q=2'), false);
});
