import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, ToolgateError } from '../../src/core/index.js';
import { toolResult } from '../../src/edge/mcp/result-shape.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

test('every error code is documented in docs/errors.md with its HTTP status and JSON-RPC code', () => {
  for (const [code, map] of Object.entries(ERROR_CODES)) {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
    assert.ok(row, `${code} has no row in docs/errors.md`);
    const cells = row.split('|').map((c) => c.trim());
    assert.equal(Number(cells[2]), map.http, `${code}: HTTP status in docs differs`);
    assert.equal(Number(cells[3]), map.jsonRpc, `${code}: JSON-RPC code in docs differs`);
  }
});

test('docs/errors.md documents no code that does not exist', () => {
  const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
  for (const code of documented)
    assert.ok(code && code in ERROR_CODES, `${code} is documented but not defined`);
});

test('the wire body of an error is exactly code, message and details', () => {
  const err = new ToolgateError('TOOL_NOT_FOUND', 'no tool x', { toolId: 'x' });
  assert.deepEqual(Object.keys(err.toBody()).sort(), ['code', 'details', 'message']);
  assert.equal(err.httpStatus, 404);
  assert.equal(JSON.stringify(err.toBody()).includes('stack'), false);
});

/** Every .ts file under a src/ folder, with its text. */
function sources(folder: string): { file: string; text: string }[] {
  const root = fileURLToPath(new URL(`../../src/${folder}`, import.meta.url));
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: `src/${folder}/${f}`, text: readFileSync(join(root, f), 'utf8') }));
}

/** The two wires: REST (src/edge/rest) and MCP (src/edge/mcp, Streamable HTTP and stdio). */
const WIRES = [...sources('edge/rest'), ...sources('edge/mcp')];

test('every code string either wire puts out is a catalogue code (and so documented)', () => {
  // An upper-case, underscored string literal in a front is an error code it may send; Fastify's
  // own FST_ERR_* codes are read from errors it throws, never sent.
  const found: string[] = [];
  for (const { file, text } of WIRES) {
    for (const m of text.matchAll(/['"`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['"`]/g)) {
      const code = m[1] ?? '';
      if (code.startsWith('FST_ERR_')) continue;
      found.push(code);
      assert.ok(code in ERROR_CODES, `${file} sends ${code}, which is not in src/core/errors.ts`);
    }
  }
  // The scan sees the codes the MCP front sends by name (so it is not vacuous).
  for (const code of ['APPROVAL_REQUIRED', 'MCP_SESSION_NOT_FOUND', 'STORE_UNAVAILABLE'])
    assert.ok(found.includes(code), `the scan did not find ${code}`);
});

test('no front writes a JSON-RPC error number: each comes from the catalogue', () => {
  for (const { file, text } of WIRES) {
    const literal = /-\s*32\d{3}\b/.exec(text);
    assert.equal(literal, null, `${file} hard-codes JSON-RPC code ${literal?.[0]}`);
  }
});

test('a JSON-RPC number is shared only by one family of codes', () => {
  // JSON-RPC 2.0's own codes are shared by every fault of their kind. Of toolgate's numbers, these
  // are shared today; the last three pairs are historical overlaps kept because clients may
  // already branch on them. A new code takes an unused number.
  const shared: Record<number, string[]> = {
    [-32004]: [
      'TOOL_NOT_FOUND',
      'AGENT_NOT_FOUND',
      'USER_NOT_FOUND',
      'SESSION_NOT_FOUND',
      'SECRET_NOT_FOUND',
      'AUDIT_RECORD_NOT_FOUND',
      'OPERATOR_NOT_FOUND',
    ],
    [-32009]: [
      'VERSION_EXISTS',
      'BREAKING_CHANGE',
      'LIFECYCLE_INVALID',
      'QUARANTINE_STATE',
      'APPROVAL_STATE',
      'SECRET_EXISTS',
      'OPERATOR_EXISTS',
    ],
    [-32030]: ['EGRESS_DENIED', 'AUDIT_CHAIN_BROKEN'],
    // The number the MCP specification fixes for HeaderMismatch.
    [-32020]: ['OUTPUT_INVALID', 'MCP_HEADER_MISMATCH'],
    [-32041]: ['SECRET_UNREADABLE', 'SANDBOX_TIMEOUT'],
    [-32042]: ['MASTER_KEY_INVALID', 'SANDBOX_LIMIT'],
  };
  const byNumber = new Map<number, string[]>();
  for (const [code, map] of Object.entries(ERROR_CODES))
    byNumber.set(map.jsonRpc, [...(byNumber.get(map.jsonRpc) ?? []), code]);
  for (const [n, codes] of byNumber) {
    if (codes.length < 2 || (n <= -32600 && n >= -32700)) continue;
    assert.deepEqual(codes.sort(), (shared[n] ?? []).sort(), `JSON-RPC ${n} is shared by ${codes}`);
  }
});

test('the MCP front sends a pending approval under its catalogue code', () => {
  const result = toolResult({
    kind: 'pending_approval',
    callId: 'call_1',
    approvalId: 'apr_1',
    argsHash: 'h',
    rendered: {
      tool: 'send_email',
      version: '1.0.0',
      action_class: 'external_send',
      arguments: { to: 'ana@customer.example' },
      destination_hosts: ['customer.example'],
      conditions: [],
      second_factor: false,
      out_of_band: false,
    },
    message: 'send_email needs approval',
  });
  const meta = result._meta?.['toolgate/decision'] as { code: string };
  assert.equal(meta.code, 'APPROVAL_REQUIRED');
  assert.ok(meta.code in ERROR_CODES);
  assert.equal(result.isError, true);
});
