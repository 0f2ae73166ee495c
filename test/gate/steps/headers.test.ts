/**
 * The `headers` step: a 2026-07-28 MCP tools/call's `Mcp-Param-*` headers (handed over by the front
 * in the call context, as sent) must agree with the arguments the resolved version declares with
 * `x-mcp-header`; a call that brings none (REST, the 2025 eras, stdio, the library) goes on. A
 * refusal is MCP_HEADER_MISMATCH, audited as a denial like any step's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallContext } from '../../../src/gate/call-context.js';
import { validTool } from '../../support/tools.js';
import { admin, harnessForFile, harnessGate } from './step-harness.js';

const { h } = harnessForFile();

/** A public tool whose `invoice` argument rides in `Mcp-Param-Invoice`. */
const ROUTED = validTool({
  id: 'routed',
  name: 'routed',
  data_access: 'none',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['invoice'],
    properties: { invoice: { type: 'string', maxLength: 40, 'x-mcp-header': 'Invoice' } },
  },
  runtime: { kind: 'inline', handler: 't.echo' },
});

let registered: Promise<unknown> | undefined;

/** A call of `bot` in a fresh session, with the headers a 2026-07-28 front would hand over. */
async function call(headers?: Record<string, string>): Promise<CallContext> {
  registered ??= h.tg.config.apply([{ kind: 'Tool', spec: ROUTED }], admin);
  await registered;
  const { sessionId } = await h.open();
  return {
    principal: { kind: 'agent', agentId: 'bot' },
    sessionId,
    ...(headers ? { mcpParamHeaders: headers } : {}),
  };
}

test('benign: the header agrees with the argument it mirrors (its Base64 form too), and the call goes on', async () => {
  for (const value of ['I-1', `=?base64?${Buffer.from('I-1').toString('base64')}?=`]) {
    const { s, r } = await h.at('headers', await call({ 'mcp-param-invoice': value }), 'routed', {
      invoice: 'I-1',
    });
    assert.equal(r, undefined, value);
    assert.deepEqual(
      s.compiled.paramHeaders.map((d) => d.header),
      ['Invoice'],
      'the declarations of the resolved version, read once when it was compiled',
    );
  }
});

test('attack: a disagreeing or missing header is refused with MCP_HEADER_MISMATCH naming it', async () => {
  for (const [headers, reason] of [
    [{ 'mcp-param-invoice': 'I-2' }, 'Mcp-Param-Invoice disagrees with the argument it mirrors'],
    [{}, 'the Mcp-Param-Invoice header is missing'],
  ] as const) {
    const { r } = await h.at('headers', await call(headers), 'routed', { invoice: 'I-1' });
    assert.ok(r?.kind === 'refuse', JSON.stringify(r));
    assert.equal(r.code, 'MCP_HEADER_MISMATCH');
    assert.equal(r.rule, 'mcp.header_mismatch');
    assert.equal(r.message, reason);
    assert.deepEqual(r.details, { header: 'Mcp-Param-Invoice', reason });
  }
});

test('benign: a call that brings no mirrored headers (REST, 2025, stdio, the library) is not checked', async () => {
  const { r } = await h.at('headers', await call(), 'routed', { invoice: 'I-1' });
  assert.equal(r, undefined);
});

test('a tool that declares no header lets any header go: there is nothing it mirrors', async () => {
  const { r } = await h.at('headers', await call({ 'mcp-param-invoice': 'x' }), 'echo', {
    invoice: 'I-1',
  });
  assert.equal(r, undefined);
});

test('through the gate: the refusal is audited as a denial naming the tool, and nothing runs', async () => {
  const gate = harnessGate(h);
  const decision = await gate.invoke(await call({ 'mcp-param-invoice': 'I-2' }), 'routed', {
    invoice: 'I-1',
  });
  assert.ok(decision.kind === 'deny', JSON.stringify(decision));
  assert.equal(decision.code, 'MCP_HEADER_MISMATCH');
  assert.deepEqual(await h.auditOf(decision.callId), ['call.denied']);
  const ok = await gate.invoke(await call({ 'mcp-param-invoice': 'I-1' }), 'routed', {
    invoice: 'I-1',
  });
  assert.equal(ok.kind, 'allow', JSON.stringify(ok));
});
