/**
 * @module The OpenAPI document a real gateway serves at /openapi.json lints clean with Redocly's
 * `recommended` ruleset (redocly.yaml, the few ignored problems listed with their reason in
 * .redocly.lint-ignore.yaml), and what clients generated from it rely on holds: one readable,
 * unique operationId per operation, no console page, every path parameter in its path, a server
 * and the licence.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fetchRestDescription } from '../../scripts/gen-docs.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { openToolgate } from '../../src/host/toolgate.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];

interface Operation {
  readonly operationId?: string;
  readonly parameters?: readonly { readonly in: string; readonly name: string }[];
}
interface Document {
  readonly info: { readonly license?: { readonly name: string; readonly identifier?: string } };
  readonly servers?: readonly { readonly url: string }[];
  readonly paths: Record<string, Record<string, Operation>>;
}

let doc: Document;
let dir: string;
before(async () => {
  doc = (await fetchRestDescription()).doc as unknown as Document;
  dir = mkdtempSync(join(tmpdir(), 'toolgate-openapi-lint-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function operations(): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] ?? {} })),
  );
}

test('every operation has its own readable operationId, named by the route', () => {
  const seen = new Map<string, string>();
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${where} has no camelCase id`);
    const id = op.operationId as string;
    assert.equal(seen.get(id), undefined, `${where} reuses ${id} of ${seen.get(id)}`);
    seen.set(id, where);
  }
  assert.ok(seen.size > 90, `only ${seen.size} operations`);
  // Stable names a client calls, not ones derived from the URL.
  assert.equal(seen.get('callTool'), 'POST /v1/sessions/{id}/calls');
  assert.equal(seen.get('revokeMyToken'), 'DELETE /v1/operators/me/tokens/{tokenId}');
});

test('the console pages are not in the document; the API routes are', () => {
  const console = Object.keys(doc.paths).filter(
    (p) => p === '/console' || p.startsWith('/console/'),
  );
  assert.deepEqual(console, []);
  assert.ok(doc.paths['/v1/tools']?.get);
});

test('every path parameter an operation declares is in its path, and every one in the path is declared', () => {
  for (const { path, method, op } of operations()) {
    const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const declared = (op.parameters ?? [])
      .filter((p) => p.in === 'path')
      .map((p) => p.name)
      .sort();
    assert.deepEqual(declared, inPath, `${method.toUpperCase()} ${path}`);
  }
});

test('every documented error is offered as the default body and as problem details', () => {
  const list = doc.paths['/v1/tools']?.get as { responses?: Record<string, unknown> } | undefined;
  assert.deepEqual(list?.responses?.['401'], {
    description: 'Default Response',
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } },
      'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } },
    },
  });
});

test('the document names its server and its licence (Apache-2.0)', () => {
  assert.deepEqual(
    doc.servers?.map((s) => s.url),
    ['/'],
  );
  assert.equal(doc.info.license?.identifier, 'Apache-2.0');
});

test('with --public-url the document names that server', async () => {
  const tg = await openToolgate({ db: `sqlite:${join(dir, 'public-url.db')}`, health: false });
  try {
    const app = await buildServer(tg, {
      adminToken: 'openapi-lint-admin-token-not-a-secret-000000',
      publicUrl: 'https://toolgate.example.com/gw',
    });
    try {
      const served = app.swagger() as { servers?: { url: string }[] };
      assert.deepEqual(
        served.servers?.map((s) => s.url),
        ['https://toolgate.example.com/gw'],
      );
    } finally {
      await app.close();
    }
  } finally {
    await tg.close();
  }
});

test('redocly lint passes with the recommended ruleset: no error, no warning', async () => {
  // The configuration and its ignore file beside the document, which the ignore file names.
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
  copyFileSync(join(ROOT, 'redocly.yaml'), join(dir, 'redocly.yaml'));
  copyFileSync(join(ROOT, '.redocly.lint-ignore.yaml'), join(dir, '.redocly.lint-ignore.yaml'));
  const cli = createRequire(join(ROOT, 'package.json')).resolve('@redocly/cli/bin/cli.js');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [cli, 'lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'],
    {
      cwd: dir,
      // Offline and quiet: no usage report, no update check.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    },
  ).catch((err: { stdout?: string; message: string }) => {
    assert.fail(`redocly lint failed: ${err.stdout?.slice(0, 4000) ?? err.message}`);
  });
  const report = JSON.parse(stdout) as {
    totals: { errors: number; warnings: number; ignored: number };
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  const found = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
  assert.deepEqual(found, []);
  assert.equal(report.totals.errors + report.totals.warnings, 0);
});
