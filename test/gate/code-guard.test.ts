/**
 * The static code guard in the gate (C9): a code argument marked `"x-toolgate-code"` is parsed
 * and judged in the policy step, before any sandbox starts. Refused code never reaches the
 * runner (the sandbox is not started: no audit pre record, nothing run); benign code runs in the
 * real namespace sandbox; and code the guard lets through although it reaches further than it
 * reads is still contained by the sandbox (no host files, no network). Registration refuses a
 * mark on a non-string schema and an unknown language.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkToolDefinition } from '../../src/domain/catalog/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore } from '../../src/records/store/index.js';
import { validTool } from '../support/tools.js';

const admin = { id: 'test-admin', via: 'library' } as const;

/** The tool: runs the JavaScript it is given inside the sandbox and prints what it returned. */
const RUNNER = `import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const args = JSON.parse(readFileSync(0, 'utf8'));
let result;
try {
  const run = new Function('require', 'return (async () => {' + args.code + '})()');
  result = await run(createRequire(import.meta.url));
}
catch (e) { result = 'threw: ' + String(e && e.code || e); }
process.stdout.write(JSON.stringify({ result: String(result) }));
`;

function codeTool(id: string, language: string, argv: string[]) {
  return validTool({
    id,
    name: id,
    description: 'Run a short computation given as code and return its result.',
    data_access: 'none',
    required_capabilities: ['code:run'],
    sandbox: { isolation: 'namespace' },
    runtime: { kind: 'command', argv },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['code'],
      properties: { code: { type: 'string', 'x-toolgate-code': language } },
    },
    output_schema: { type: 'object' },
  });
}

/** The same runner with a plain string argument: the guard never reads it. */
function unmarkedTool(id: string, argv: string[]) {
  const tool = codeTool(id, 'javascript', argv);
  return {
    ...tool,
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['code'],
      properties: { code: { type: 'string' } },
    },
  };
}

describe('static code guard in the gate', () => {
  let dir: string;
  let tg: Gateway;
  let sessionId: string;

  const call = (tool: string, code: string): Promise<GateDecision> =>
    tg.gate.invoke({ agentId: 'coder', sessionId }, tool, { code });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-code-guard-'));
    chmodSync(dir, 0o755);
    const script = join(dir, 'run.mjs');
    writeFileSync(script, RUNNER, { mode: 0o644 });
    tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
    await tg.config.apply(
      [
        { kind: 'Tool', spec: codeTool('run_js', 'javascript', [process.execPath, script]) },
        { kind: 'Tool', spec: unmarkedTool('run_js_unmarked', [process.execPath, script]) },
        // Never run here: the Python calls below are all decided before the runtime.
        { kind: 'Tool', spec: codeTool('run_py', 'python', ['/usr/bin/python3', '-c', 'pass']) },
        { kind: 'Agent', spec: { id: 'coder', owner: 'qa' } },
        { kind: 'Grant', spec: { agent: 'coder', capabilities: ['code:run'] } },
      ],
      admin,
    );
    sessionId = (await tg.sessions.open('coder')).id;
  });

  after(async () => {
    await tg?.close();
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  async function refused(tool: string, code: string, errorCode: string, rule: string) {
    const d = await call(tool, code);
    assert.equal(d.kind, 'deny', JSON.stringify(d));
    if (d.kind !== 'deny') return;
    assert.equal(d.code, errorCode, d.message);
    assert.equal(d.rule, rule, d.message);
    assert.match(d.message, /^\/code: code /);
  }

  test('evasions are refused before any sandbox starts, each naming its rule', async () => {
    await refused(
      'run_js',
      "require('child_' + 'process').execSync('id')",
      'CODE_REFUSED',
      'code.import_not_allowed',
    );
    await refused(
      'run_js',
      "require(['child', 'process'].join('_'))",
      'CODE_REFUSED',
      'code.dynamic_import',
    );
    await refused(
      'run_js',
      "Reflect.get(process, 'bin' + 'ding')",
      'CODE_REFUSED',
      'code.dangerous_global',
    );
    await refused('run_js', "\\u0065val('1')", 'CODE_REFUSED', 'code.dynamic_eval');
    await refused('run_js', 'return (1', 'CODE_UNCHECKABLE', 'code.syntax');
    await refused(
      'run_py',
      "getattr(os, 'sys' + 'tem')('id')",
      'CODE_REFUSED',
      'code.dynamic_attribute',
    );
    await refused('run_py', 'from subprocess import *', 'CODE_REFUSED', 'code.import_not_allowed');
    // Nothing was let run: the session's records are the refusals alone, no "about to run" one.
    await tg.gate.flush();
    const inspector = await openStore(`sqlite:${join(dir, 'tg.db')}`);
    try {
      const rows = await inspector.db
        .selectFrom('audit_log')
        .select(['kind', 'code'])
        .where('session_id', '=', sessionId)
        .execute();
      assert.deepEqual(
        rows.map((r) => r.kind),
        Array.from({ length: 7 }, () => 'call.denied'),
      );
      assert.ok(rows.every((r) => r.code === 'CODE_REFUSED' || r.code === 'CODE_UNCHECKABLE'));
    } finally {
      await inspector.close();
    }
  });

  test('benign code runs in the sandbox and its result comes back', async () => {
    const d = await call(
      'run_js',
      "const { createHash } = require('node:crypto'); return JSON.stringify({ n: Math.sqrt(16), h: createHash('sha256').update('x').digest('hex').slice(0, 8) });",
    );
    assert.equal(d.kind, 'allow', JSON.stringify(d));
    assert.deepEqual(d.kind === 'allow' ? d.output : null, {
      result: JSON.stringify({ n: 4, h: '2d711642' }),
    });
  });

  test('a key chosen at run time is refused by the guard, and the sandbox still contains such code where no guard looks', async () => {
    // A key chosen at run time reaches the Function constructor without naming it: the guard
    // refuses a read under a key it cannot prove harmless once the value read is passed on.
    const sneaky =
      "const k = ['constr', 'uctor'].join(''); const F = [][k][k]; const p = F('return process')();" +
      " const get = p[['getBuiltin', 'Module'].join('')]; const fs = get.call(p, 'fs');" +
      " let file = 'none'; try { file = fs.readFileSync('/etc/shadow', 'utf8').slice(0, 4); } catch (e) { file = e.code; }" +
      " const f = F('return fe' + 'tch')();" +
      " let net = 'none'; try { await f('http://127.0.0.1:9/'); net = 'reached'; } catch (e) { net = 'blocked'; }" +
      ' return file + " " + net;';
    await refused('run_js', sneaky, 'CODE_REFUSED', 'code.computed_access');
    // The same code given to a tool whose argument carries no code mark is not read by the
    // guard at all: the sandbox still shows it no host file and no network.
    const d = await tg.gate.invoke({ agentId: 'coder', sessionId }, 'run_js_unmarked', {
      code: sneaky,
    });
    assert.equal(d.kind, 'allow', JSON.stringify(d));
    const result = d.kind === 'allow' ? String((d.output as { result: string }).result) : '';
    assert.match(result, /^(ENOENT|EACCES|none) blocked$/, result);
  });
});

describe('registration of code marks', () => {
  test('a mark on a non-string schema, or an unknown language, is refused with its pointer', () => {
    const onObject = checkToolDefinition(
      validTool({
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: { code: { type: 'object', 'x-toolgate-code': 'python' } },
        },
      }),
    );
    assert.equal(onObject.ok, false);
    assert.ok(
      !onObject.ok &&
        onObject.problems.some(
          (p) =>
            p.rule === 'policy.code_type' &&
            p.pointer === '/input_schema/properties/code/x-toolgate-code',
        ),
      JSON.stringify(onObject),
    );
    const unknown = checkToolDefinition(
      validTool({
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: { code: { type: 'string', 'x-toolgate-code': 'ruby' } },
        },
      }),
    );
    assert.equal(unknown.ok, false);
    const fine = checkToolDefinition(
      validTool({
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: { code: { type: 'string', 'x-toolgate-code': 'javascript' } },
        },
      }),
    );
    assert.ok(fine.ok, JSON.stringify(fine));
  });
});
