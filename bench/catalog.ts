/**
 * Catalog benchmark: registration throughput and discovery latency with 10,000 tools on
 * SQLite (WAL, synchronous=FULL). Baselines measured in the same run: a raw prepared INSERT of
 * the same rows with no validation, scanning or events (what an unchecked registry costs), and a
 * naive linear substring scan for search. The last line printed is one JSON object.
 *
 *   npm run bench:catalog   (TOOLS=10000 BATCH=500 QUERIES=2000 SINGLE=1000 by default)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import type { Actor } from '../src/core/index.js';
import { buildServer } from '../src/edge/rest/index.js';
import { openGateway } from '../src/host/toolgate.js';

const TOOLS = Number(process.env.TOOLS ?? 10_000);
const BATCH = Number(process.env.BATCH ?? 500);
const QUERIES = Number(process.env.QUERIES ?? 2_000);
const SINGLE = Math.min(Number(process.env.SINGLE ?? 1_000), TOOLS);
const actor: Actor = { id: 'bench', via: 'library' };

const nouns = [
  'invoice',
  'ticket',
  'order',
  'customer',
  'shipment',
  'refund',
  'report',
  'label',
  'account',
  'repository',
  'issue',
  'deployment',
  'metric',
  'alert',
  'calendar',
  'meeting',
  'document',
  'spreadsheet',
  'contract',
  'payment',
  'subscription',
  'webhook',
  'message',
  'channel',
  'user',
  'role',
  'secret',
  'bucket',
  'file',
  'folder',
];
const verbs = [
  'get',
  'list',
  'search',
  'create',
  'update',
  'archive',
  'export',
  'summarize',
  'count',
  'validate',
  'tag',
  'close',
  'open',
  'sync',
  'preview',
];
const domains = [
  'billing',
  'support',
  'devops',
  'sales',
  'hr',
  'finance',
  'security',
  'analytics',
  'crm',
  'storage',
];
const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

function definition(i: number): Record<string, unknown> {
  const verb = pick(verbs, i);
  const noun = pick(nouns, Math.floor(i / verbs.length));
  const domain = pick(domains, Math.floor(i / 7));
  const id = `${domain}.${verb}_${noun}_${i}`;
  return {
    id,
    version: '1.0.0',
    name: `${verb}_${noun}_${i}`,
    description: `${verb[0]?.toUpperCase()}${verb.slice(1)} a ${noun} in the ${domain} system and return its fields. Useful when a user asks about a ${noun}.`,
    tags: [domain, noun, verb],
    owner: `${domain}-team`,
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: { type: 'string', maxLength: 64 },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
      },
    },
    output_schema: { type: 'object', properties: { result: { type: 'object' } } },
    action_class: i % 10 === 0 ? 'reversible_write' : 'read',
    data_access: i % 3 === 0 ? 'private' : 'public',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: [`${domain}:read`],
    runtime: { kind: 'inline', handler: `bench.${verb}` },
    provenance: 'internal',
  };
}

function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    p50_ms: r(percentile(s, 50)),
    p95_ms: r(percentile(s, 95)),
    p99_ms: r(percentile(s, 99)),
  };
}

const queries = Array.from({ length: QUERIES }, (_, i) =>
  i % 3 === 0
    ? `${pick(verbs, i * 7)} ${pick(nouns, i * 13)}`
    : i % 3 === 1
      ? pick(nouns, i * 11)
      : `${pick(nouns, i)} ${pick(domains, i * 5)}`,
);

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
try {
  const defs = Array.from({ length: TOOLS }, (_, i) => definition(i));

  // Baseline 1: the same rows through a raw prepared INSERT, batched, same pragmas, nothing checked.
  const raw = new BetterSqlite3(join(dir, 'raw.db'));
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.exec('create table t (id text, version text, definition text, primary key (id, version))');
  const insert = raw.prepare('insert into t values (?, ?, ?)');
  const insertMany = raw.transaction((rows: Record<string, unknown>[]) => {
    for (const d of rows) insert.run(d.id, d.version, JSON.stringify(d));
  });
  let t0 = performance.now();
  for (let i = 0; i < defs.length; i += BATCH) insertMany(defs.slice(i, i + BATCH));
  const rawSeconds = (performance.now() - t0) / 1000;
  raw.close();

  const tg = await openGateway({ db: `sqlite:${join(dir, 'toolgate.db')}` });

  // toolgate, bulk: apply -f of BATCH tools per file (one transaction each), full checks.
  t0 = performance.now();
  for (let i = 0; i < defs.length; i += BATCH) {
    await tg.config.apply(
      defs.slice(i, i + BATCH).map((spec) => ({ kind: 'Tool', spec })),
      actor,
    );
  }
  const bulkSeconds = (performance.now() - t0) / 1000;

  // toolgate, one at a time: a transaction (and an fsync) per registration.
  const singles = Array.from({ length: SINGLE }, (_, i) => ({
    ...definition(i),
    id: `single.tool_${i}`,
    name: `single_tool_${i}`,
  }));
  t0 = performance.now();
  for (const d of singles) await tg.catalog.register(d, actor);
  const singleSeconds = (performance.now() - t0) / 1000;

  // Discovery, in process (includes the revision check against the database on every query).
  // Warm up (JIT, index build) and collect the registration phase's garbage before measuring,
  // so the latency figures are about search, not about the previous phase.
  const gc = (globalThis as { gc?: () => void }).gc;
  for (const q of queries.slice(0, 200)) await tg.discovery.search({ q, limit: 20 });
  gc?.();
  const inProcess: number[] = [];
  let hitsTotal = 0;
  for (const q of queries) {
    const s = performance.now();
    const hits = await tg.discovery.search({ q, limit: 20 });
    inProcess.push(performance.now() - s);
    hitsTotal += hits.length;
  }

  // Discovery over REST on loopback (Fastify, auth, validation, serialization).
  const app = await buildServer(tg, { adminToken: 'bench-admin-token-0123456789abcdef' });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const headers = { authorization: 'Bearer bench-admin-token-0123456789abcdef' };
  const overHttp: number[] = [];
  for (const q of queries.slice(0, Math.min(1000, QUERIES))) {
    const s = performance.now();
    const res = await fetch(`${address}/v1/discovery?q=${encodeURIComponent(q)}&limit=20`, {
      headers,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`discovery over REST answered ${res.status}`);
    overHttp.push(performance.now() - s);
  }
  await app.close();

  // Baseline 2: a naive linear scan (substring on every word) over the same tools, in memory.
  const all = (await tg.catalog.list()).map((t) => ({
    id: t.id,
    text: `${t.name} ${t.description} ${t.tags.join(' ')}`.toLowerCase(),
  }));
  const naive: number[] = [];
  for (const q of queries) {
    const s = performance.now();
    const words = q.toLowerCase().split(/\s+/);
    const scored = all
      .map((t) => ({ id: t.id, score: words.filter((w) => t.text.includes(w)).length }))
      .filter((t) => t.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, 20);
    naive.push(performance.now() - s);
    if (scored.length < 0) throw new Error('unreachable');
  }
  await tg.close();

  const bulkRate = TOOLS / bulkSeconds;
  const rawRate = TOOLS / rawSeconds;
  const singleRate = SINGLE / singleSeconds;
  const disc = stats(inProcess);
  const http = stats(overHttp);
  const base = stats(naive);
  const result = {
    bench: 'catalog',
    tools: TOOLS,
    batch: BATCH,
    registration_bulk_tools_per_s: Math.round(bulkRate),
    registration_single_tools_per_s: Math.round(singleRate),
    baseline_raw_insert_tools_per_s: Math.round(rawRate),
    ratio_bulk_to_raw_insert: Math.round((bulkRate / rawRate) * 1000) / 1000,
    discovery_queries: QUERIES,
    discovery_avg_hits: Math.round((hitsTotal / QUERIES) * 10) / 10,
    discovery_in_process: disc,
    discovery_rest_loopback: http,
    baseline_naive_scan: base,
    ratio_discovery_p95_to_naive_p95: Math.round((disc.p95_ms / base.p95_ms) * 1000) / 1000,
    goal_discovery_p95_ms: 5,
    goal_registration_tools_per_s: 1000,
    goals_met: disc.p95_ms <= 5 && http.p95_ms <= 5 && bulkRate >= 1000,
  };
  console.log(
    `registration: bulk ${result.registration_bulk_tools_per_s}/s, single ${result.registration_single_tools_per_s}/s, raw insert ${result.baseline_raw_insert_tools_per_s}/s`,
  );
  console.log(
    `discovery p95: in-process ${disc.p95_ms} ms, REST ${http.p95_ms} ms, naive scan ${base.p95_ms} ms`,
  );
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
