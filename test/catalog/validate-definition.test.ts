import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import { validSendTool, validTool } from '../support/tools.js';

function problemsOf(input: unknown): { pointer: string; rule: string; message: string }[] {
  const result = checkToolDefinition(input);
  assert.equal(result.ok, false, 'expected the definition to be refused');
  return result.ok ? [] : [...result.problems];
}

function accepted(input: unknown): ToolDefinition {
  const result = checkToolDefinition(input);
  if (!result.ok) assert.fail(`refused: ${JSON.stringify(result.problems)}`);
  return result.definition;
}

function pointers(input: unknown): string[] {
  return problemsOf(input).map((p) => p.pointer);
}

describe('a complete definition', () => {
  test('is accepted and every default is filled in', () => {
    const definition = accepted(validTool());
    assert.deepEqual(definition.approval, {
      mode: 'none',
      second_factor: false,
      out_of_band: false,
    });
    assert.equal(definition.idempotent, true);
    assert.equal(definition.sandbox.isolation, 'none');
    assert.equal(definition.sandbox.network, 'none');
    assert.equal(definition.sandbox.limits.wall_time_ms, 10_000);
  });

  test('an external_send tool gets approval "always" by default', () => {
    const definition = accepted(validSendTool());
    assert.equal(definition.approval.mode, 'always');
    assert.equal(definition.sandbox.network, 'egress_proxy');
  });

  test('the demo-style conditional refund with a second factor is accepted', () => {
    const definition = accepted(
      validTool({
        action_class: 'irreversible',
        access_tier: 'privileged',
        approval: {
          mode: 'conditional',
          conditions: [{ argument: '/amount', op: 'gt', value: 100 }],
        },
      }),
    );
    assert.equal(definition.approval.second_factor, true);
  });
});

describe('completeness and shape', () => {
  test('every missing required field is listed at once with its pointer', () => {
    const found = pointers({ id: 'x', version: '1.0.0' });
    // Spelled out on purpose (not read from the schema): this pins C1's required fields.
    for (const field of [
      'name',
      'description',
      'owner',
      'input_schema',
      'output_schema',
      'action_class',
      'data_access',
      'egress',
      'access_tier',
      'required_capabilities',
      'runtime',
      'provenance',
    ]) {
      assert.ok(found.includes(`/${field}`), `missing /${field} in ${found.join(', ')}`);
    }
  });

  test('a hostile nesting depth is refused, not a stack overflow', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 50_000; i++) deep = { type: 'object', properties: { a: deep } };
    const found = problemsOf(
      validTool({
        input_schema: { type: 'object', additionalProperties: false, properties: { x: deep } },
      }),
    );
    assert.deepEqual(
      found.map((p) => p.rule),
      ['depth'],
    );
  });

  test('schema descriptions are size-capped, each and in total (scanning them has a bounded cost)', () => {
    const long = {
      type: 'object',
      additionalProperties: false,
      properties: { a: { type: 'string', description: 'x'.repeat(5000) } },
    };
    assert.ok(
      pointers(validTool({ input_schema: long })).includes(
        '/input_schema/properties/a/description',
      ),
    );
    const many = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `p${i}`,
        { type: 'string', description: 'y'.repeat(2000) },
      ]),
    );
    const found = problemsOf(
      validTool({
        input_schema: { type: 'object', additionalProperties: false, properties: many },
      }),
    );
    assert.ok(found.some((p) => p.rule === 'size.text' && p.pointer === ''));
  });

  test('a non-object is refused at the document root', () => {
    assert.deepEqual(pointers([validTool()]), ['']);
    assert.deepEqual(pointers('id: x'), ['']);
    assert.deepEqual(pointers(null), ['']);
  });

  test('an unknown property is refused by name', () => {
    assert.ok(pointers(validTool({ run_as_root: true })).includes('/run_as_root'));
  });

  test('bad id formats are refused', () => {
    for (const id of [
      'Send_Email',
      '1tool',
      'a..b',
      'tool with space',
      '../etc',
      'x'.repeat(250),
      '',
    ]) {
      assert.ok(
        pointers(validTool({ id })).includes('/id'),
        `id ${JSON.stringify(id)} was accepted`,
      );
    }
  });

  test('a dotted provider id is accepted', () => {
    assert.ok(checkToolDefinition(validTool({ id: 'github.create_issue' })).ok);
  });

  test('versions must be SemVer', () => {
    for (const version of ['1', '1.0', 'v1.0.0', '01.0.0', '1.0.0-', 'latest']) {
      assert.ok(
        pointers(validTool({ version })).includes('/version'),
        `version ${version} was accepted`,
      );
    }
    assert.ok(checkToolDefinition(validTool({ version: '2.1.0-rc.1+build.5' })).ok);
  });

  test('an unknown runtime kind points at /runtime/kind', () => {
    assert.ok(
      pointers(validTool({ runtime: { kind: 'shell', cmd: 'rm -rf /' } })).includes(
        '/runtime/kind',
      ),
    );
  });

  test('a tool without required capabilities is refused (no tool is open to every agent)', () => {
    assert.ok(
      pointers(validTool({ required_capabilities: [] })).includes('/required_capabilities'),
    );
  });
});

describe('authored JSON Schemas', () => {
  test('an input schema that allows unknown properties is refused', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    assert.ok(
      pointers(validTool({ input_schema: schema })).includes('/input_schema/additionalProperties'),
    );
    const open = { ...schema, additionalProperties: true };
    assert.ok(
      pointers(validTool({ input_schema: open })).includes('/input_schema/additionalProperties'),
    );
  });

  test('unevaluatedProperties: false also closes the top level', () => {
    const schema = {
      type: 'object',
      unevaluatedProperties: false,
      properties: { a: { type: 'string' } },
    };
    assert.ok(checkToolDefinition(validTool({ input_schema: schema })).ok);
  });

  test('a top-level input schema that is not an object is refused', () => {
    assert.ok(
      pointers(validTool({ input_schema: { type: 'string' } })).includes('/input_schema/type'),
    );
  });

  test('an invalid JSON Schema is refused with a pointer inside it', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: { a: { type: 'strin' } },
    };
    const found = pointers(validTool({ input_schema: schema }));
    assert.ok(
      found.some((p) => p.startsWith('/input_schema/properties/a')),
      found.join(', '),
    );
  });

  test('a misspelt keyword is refused instead of silently validating nothing', () => {
    const schema = { type: 'object', additionalProperties: false, requried: ['a'], properties: {} };
    const found = problemsOf(validTool({ input_schema: schema }));
    assert.ok(
      found.some((p) => p.pointer === '/input_schema' && /requried/.test(p.message)),
      JSON.stringify(found),
    );
  });

  test('a remote $ref is refused, never fetched', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: { a: { $ref: 'https://evil.example/s.json' } },
    };
    assert.ok(pointers(validTool({ input_schema: schema })).includes('/input_schema'));
  });

  test('a 2020-12 $anchor and a $ref to it are taken (the MCP conformance tool names one)', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      $defs: { city: { $anchor: 'cityDef', type: 'string' } },
      properties: { city: { $ref: '#cityDef' } },
    };
    assert.deepEqual(accepted(validTool({ input_schema: schema })).input_schema, schema);
  });

  test('a draft-07 schema (as SDK-built MCP servers list them) is checked as draft-07', () => {
    const draft07 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      properties: { a: { type: 'number' } },
    };
    assert.deepEqual(accepted(validTool({ input_schema: draft07 })).input_schema, draft07);
    // prefixItems is 2020-12 only: under draft-07 it is an unknown keyword, refused.
    const mixed = {
      ...draft07,
      properties: { a: { type: 'array', prefixItems: [{ type: 'string' }] } },
    };
    assert.ok(pointers(validTool({ input_schema: mixed })).includes('/input_schema'));
  });

  test('another dialect is refused', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      additionalProperties: false,
    };
    assert.ok(pointers(validTool({ input_schema: schema })).includes('/input_schema/$schema'));
  });

  test('an unknown format is refused', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: { a: { type: 'string', format: 'emial' } },
    };
    assert.ok(pointers(validTool({ input_schema: schema })).includes('/input_schema'));
  });

  test('the output schema must be valid and an object', () => {
    assert.ok(
      pointers(validTool({ output_schema: { type: 'array' } })).includes('/output_schema/type'),
    );
    assert.ok(
      pointers(
        validTool({ output_schema: { type: 'object', properties: { a: { minimum: 'x' } } } }),
      ).some((p) => p.startsWith('/output_schema')),
    );
  });
});

describe('safety floors', () => {
  test('an external_send tool may not switch approval off; a read tool may', () => {
    assert.ok(pointers(validSendTool({ approval: { mode: 'none' } })).includes('/approval/mode'));
    assert.ok(checkToolDefinition(validTool({ approval: { mode: 'none' } })).ok);
    assert.ok(
      checkToolDefinition(validTool({ approval: { mode: 'always' } })).ok,
      'tightening is allowed',
    );
  });

  test('an irreversible tool needs a second factor and may not be public', () => {
    const found = pointers(
      validTool({
        action_class: 'irreversible',
        access_tier: 'public',
        approval: { mode: 'always', second_factor: false },
      }),
    );
    assert.ok(found.includes('/approval/second_factor'));
    assert.ok(found.includes('/access_tier'));
  });

  test('a permission_change tool is privileged and approved out of band only', () => {
    const found = pointers(
      validTool({
        action_class: 'permission_change',
        access_tier: 'restricted',
        approval: {
          mode: 'conditional',
          conditions: [{ argument: '/x', op: 'eq', value: 1 }],
          out_of_band: false,
        },
      }),
    );
    assert.ok(found.includes('/access_tier'));
    assert.ok(found.includes('/approval/mode'));
    assert.ok(found.includes('/approval/out_of_band'));
  });

  test('conditional approval needs conditions', () => {
    assert.ok(
      pointers(validSendTool({ approval: { mode: 'conditional' } })).includes(
        '/approval/conditions',
      ),
    );
  });

  test('egress hosts must be exact names, never IP literals, wildcards or URLs', () => {
    for (const host of [
      '127.0.0.1',
      '10.0.0.1',
      '2130706433',
      '0x7f000001',
      '*.example.com',
      'https://a.example.com',
      'a.example.com:8443',
      'A.EXAMPLE.COM',
      'example.com.',
      'localhost',
      '169.254.169.254',
    ]) {
      const found = pointers(
        validSendTool({
          egress: { mode: 'constrained', hosts: [host] },
          runtime: { kind: 'inline', handler: 'x' },
        }),
      );
      assert.ok(
        found.some((p) => p.startsWith('/egress/hosts')),
        `host ${host} was accepted: ${found.join(', ')}`,
      );
    }
  });

  test('an http runtime must be https, default port, no userinfo, and on an allowed host', () => {
    const cases: [string, string][] = [
      ['http://notify.example.com', '/runtime/base_url'],
      ['https://user:pw@notify.example.com', '/runtime/base_url'],
      ['https://notify.example.com:8443', '/runtime/base_url'],
      ['https://other.example.com', '/runtime/base_url'],
      ['https://notify.example.com.evil.example', '/runtime/base_url'],
    ];
    for (const [base_url, pointer] of cases) {
      const found = pointers(
        validSendTool({ runtime: { kind: 'http', base_url, method: 'POST', path: '/v1/send' } }),
      );
      assert.ok(found.includes(pointer), `${base_url} accepted: ${found.join(', ')}`);
    }
  });

  test('a command runtime is never run unsandboxed', () => {
    const found = pointers(
      validTool({
        runtime: { kind: 'command', argv: ['node', 'x.js'] },
        sandbox: { isolation: 'none' },
      }),
    );
    assert.ok(found.includes('/sandbox/isolation'));
    const pure = validTool({
      data_access: 'none',
      runtime: { kind: 'command', argv: ['node', 'x.js'] },
      sandbox: { isolation: 'process' },
    });
    assert.ok(checkToolDefinition(pure).ok, 'a pure transform may use process isolation');
    const notPure = validTool({
      runtime: { kind: 'command', argv: ['node', 'x.js'] },
      sandbox: { isolation: 'process' },
    });
    assert.ok(pointers(notPure).includes('/sandbox/isolation'));
  });

  test('a tool without egress cannot ask for the egress proxy', () => {
    assert.ok(
      pointers(
        validTool({ sandbox: { isolation: 'namespace', network: 'egress_proxy' } }),
      ).includes('/sandbox/network'),
    );
  });
});

describe('a declared cost', () => {
  const withAmount = (amount: Record<string, unknown>, required = ['amount']) =>
    validTool({
      input_schema: {
        type: 'object',
        additionalProperties: false,
        required,
        properties: { invoice: { type: 'string' }, amount },
      },
    });

  test('a fixed amount or a required non-negative numeric argument is accepted', () => {
    assert.deepEqual(accepted(validTool({ cost: { fixed_cents: 25 } })).cost, { fixed_cents: 25 });
    const major = { type: 'number', minimum: 0 };
    assert.deepEqual(
      accepted({ ...withAmount(major), cost: { argument: 'amount', unit: 'major' } }).cost,
      { argument: 'amount', unit: 'major' },
    );
    const cents = { type: 'integer', exclusiveMinimum: 0 };
    accepted({ ...withAmount(cents), cost: { argument: 'amount', unit: 'cents' } });
  });

  test('a cost argument that is not a required, numeric, non-negative property is refused', () => {
    const cost = { argument: 'amount', unit: 'cents' };
    const cases: [string, unknown][] = [
      ['unknown', { ...validTool(), cost }],
      ['optional', { ...withAmount({ type: 'integer', minimum: 0 }, []), cost }],
      ['a string', { ...withAmount({ type: 'string' }), cost }],
      ['fractional for cents', { ...withAmount({ type: 'number', minimum: 0 }), cost }],
      ['possibly negative', { ...withAmount({ type: 'integer' }), cost }],
      ['negative floor', { ...withAmount({ type: 'integer', minimum: -1 }), cost }],
    ];
    for (const [why, definition] of cases) {
      const problems = problemsOf(definition);
      assert.deepEqual(
        problems.map((p) => `${p.pointer} ${p.rule}`),
        ['/cost/argument cost.argument'],
        why,
      );
    }
  });

  test('a cost that is both, neither, negative or fractional is refused by shape', () => {
    for (const cost of [
      { fixed_cents: 1, argument: 'amount', unit: 'cents' },
      {},
      { fixed_cents: -1 },
      { fixed_cents: 2.5 },
      { argument: 'amount' },
    ]) {
      assert.ok(
        pointers({ ...validTool(), cost }).some((p) => p.startsWith('/cost')),
        JSON.stringify(cost),
      );
    }
  });
});

describe('a third-party command tool', () => {
  const command = (extra: Record<string, unknown> = {}) =>
    validTool({
      provenance: 'third_party',
      runtime: { kind: 'command', argv: ['/usr/bin/node', '/srv/tools/x.mjs'] },
      sandbox: { isolation: 'namespace' },
      ...extra,
    });

  test('without a code_hash is refused: its review would bind a path, not the code behind it', () => {
    const problems = problemsOf(command());
    assert.deepEqual(
      problems.map((p) => [p.pointer, p.rule]),
      [['/code_hash', 'code_hash.required']],
    );
    assert.match(problems[0]?.message ?? '', /tools hash/);
  });

  test('an open-source command tool without one is refused alike', () => {
    assert.deepEqual(
      problemsOf(command({ provenance: 'oss' })).map((p) => p.rule),
      ['code_hash.required'],
    );
  });

  test('with its code_hash is accepted; an internal command tool or a third-party http tool needs none', () => {
    accepted(command({ code_hash: `sha256:${'a'.repeat(64)}` }));
    accepted(command({ provenance: 'internal' }));
    accepted(validTool({ provenance: 'third_party' }));
  });
});

describe('a tool run by an upstream provider', () => {
  const upstream = (runtime: Record<string, unknown>) =>
    validTool({ provenance: 'third_party', sandbox: { isolation: 'namespace' }, runtime });

  test('registered by hand without the launch it is reviewed for is refused', () => {
    assert.deepEqual(
      problemsOf(upstream({ kind: 'mcp', provider: 'ledger', tool: 'balance' })).map((p) => [
        p.pointer,
        p.rule,
      ]),
      [['/runtime/launch', 'runtime.launch_required']],
    );
  });

  test('with a launch (as classifying the provider tool writes it) it is accepted', () => {
    accepted(
      upstream({
        kind: 'mcp',
        provider: 'ledger',
        tool: 'balance',
        launch: `sha256:${'a'.repeat(64)}`,
      }),
    );
  });
});
