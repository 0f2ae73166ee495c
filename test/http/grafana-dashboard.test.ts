/**
 * The Grafana dashboard in deploy/grafana and the metrics list in docs/operations.md stay true:
 * the dashboard is a Grafana model, every metric its PromQL queries exists on `/metrics` of a real
 * running server after some traffic, and the documented metrics — names, types, labels — are the
 * ones that server exposes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { openWorld, postMcp, restClient, type World } from '../support/world.js';

const ADMIN = 'admin-token-for-the-dashboard-test-0123456789';
const DASHBOARD = 'deploy/grafana/toolgate-dashboard.json';

interface Target {
  readonly refId?: unknown;
  readonly expr?: unknown;
  readonly datasource?: unknown;
}
interface Panel {
  readonly id?: unknown;
  readonly type?: unknown;
  readonly title?: unknown;
  readonly datasource?: unknown;
  readonly gridPos?: { h?: unknown; w?: unknown; x?: unknown; y?: unknown };
  readonly targets?: readonly Target[];
  readonly panels?: readonly Panel[];
}
interface Dashboard {
  readonly uid?: unknown;
  readonly title?: unknown;
  readonly schemaVersion?: unknown;
  readonly panels?: readonly Panel[];
  readonly templating?: { list?: readonly { name?: unknown; type?: unknown; query?: unknown }[] };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;

/** Every panel, rows' nested panels included. */
function allPanels(d: Dashboard): Panel[] {
  return (d.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** PromQL words that are not metric names: aggregation modifiers, operators, keywords. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects. Strings, label matchers (`{…}`), grouping
 * lists (`by (…)`), ranges (`[…]`), Grafana variables and numbers (durations too) go first; of the words left, one followed
 * by `(` is a function or an aggregation, and keywords and numbers are not names.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/\b\d[\w.]*/g, ' ');
  const names: string[] = [];
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = m[0];
    const next = bare.slice((m.index ?? 0) + word.length).trimStart();
    if (next.startsWith('(') || KEYWORDS.has(word.toLowerCase())) continue;
    names.push(word);
  }
  return names;
}

/** Each metric family the exposition declares (`# TYPE name type`), with its type. */
function declared(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1] ?? '', m[2] ?? '');
  return out;
}

/** The family a sample name belongs to (a histogram's _bucket, _sum and _count are its own). */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return types.get(base) === 'histogram' || types.get(base) === 'summary' ? base : undefined;
}

/** Label names seen on the samples of `family` (histogram `le` left out). */
function labelsSeen(text: string, family: string): Set<string> | null {
  const lines = text
    .split('\n')
    .filter(
      (l) =>
        /^[a-z]/.test(l) && l.replace(/[{ ].*/, '').replace(/_(bucket|sum|count)$/, '') === family,
    );
  if (lines.length === 0) return null;
  const names = new Set<string>();
  for (const l of lines)
    for (const m of (/\{(.*)\}/.exec(l)?.[1] ?? '').matchAll(/(\w+)="/g))
      if (m[1] !== 'le') names.add(m[1] ?? '');
  return names;
}

test('the PromQL reader finds metric names only', () => {
  assert.deepEqual(
    metricNames(
      'histogram_quantile(0.95, sum by (le, method) (rate(a_seconds_bucket{job=~"$job",method!="x(y)"}[$__rate_interval])))',
    ),
    ['a_seconds_bucket'],
  );
  assert.deepEqual(metricNames('sum(rate(b_total[5m])) / on (job) group_left c_info offset 1h'), [
    'b_total',
    'c_info',
  ]);
  assert.deepEqual(metricNames('max by (state) (d{job=~"$job"}) > 0 and e'), ['d', 'e']);
});

test('the dashboard is a Grafana model: schema version, uid, panels with datasource and targets', () => {
  assert.equal(typeof dashboard.uid, 'string');
  assert.equal(typeof dashboard.title, 'string');
  assert.ok(Number.isInteger(dashboard.schemaVersion) && Number(dashboard.schemaVersion) >= 36);
  const panels = allPanels(dashboard);
  assert.ok(panels.length > 10);
  const ids = panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  for (const p of panels) {
    assert.ok(Number.isInteger(p.id), `panel ${String(p.title)}: id`);
    assert.equal(typeof p.type, 'string');
    assert.equal(typeof p.title, 'string');
    for (const k of ['h', 'w', 'x', 'y'] as const)
      assert.ok(Number.isInteger(p.gridPos?.[k]), `panel ${String(p.title)}: gridPos.${k}`);
    assert.ok(
      Number(p.gridPos?.x) + Number(p.gridPos?.w) <= 24,
      `${String(p.title)} fits 24 columns`,
    );
    if (p.type === 'row') continue;
    assert.ok(p.datasource, `panel ${String(p.title)} has a datasource`);
    assert.ok((p.targets ?? []).length > 0, `panel ${String(p.title)} has targets`);
    for (const t of p.targets ?? []) {
      assert.equal(typeof t.refId, 'string');
      assert.equal(typeof t.expr, 'string', `panel ${String(p.title)}: a PromQL expr`);
      assert.ok(t.datasource, `panel ${String(p.title)} target ${String(t.refId)}: datasource`);
    }
  }
  // The datasource is chosen at import: a variable of type datasource, used by the panels.
  const vars = dashboard.templating?.list ?? [];
  assert.ok(vars.some((v) => v.name === 'datasource' && v.type === 'datasource'));
  const titles = panels.map((p) => String(p.title).toLowerCase()).join(' | ');
  for (const wanted of [
    'call rate',
    'decisions',
    'http latency',
    'mcp latency',
    'errors',
    'admission refusals',
    'approvals pending',
    'audit append',
    'memory',
    'cpu',
    'event-loop lag',
    'build info',
  ])
    assert.ok(titles.includes(wanted), `a panel for ${wanted}`);
});

describe('the dashboard and the docs against a real server after some traffic', () => {
  let world: World;
  let base = '';
  let key = '';
  let exposition = '';
  const rest = restClient(() => base);

  before(async () => {
    world = await openWorld({
      demo: true,
      keys: ['support-bot'],
      rest: { adminToken: ADMIN, admission: { maxInFlight: 1, maxQueued: 0 } },
    });
    base = world.base;
    key = world.keys['support-bot'] ?? '';
    const sid = (await rest('POST', '/v1/sessions', {}, key)).body.id as string;
    const invoke = (tool: string, args: unknown) =>
      rest('POST', `/v1/sessions/${sid}/calls`, { tool, arguments: args }, key);
    assert.equal((await invoke('search_tickets', { query: 'refund' })).status, 200);
    assert.equal((await invoke('get_order', { order_id: 'nope' })).status, 400);
    assert.equal((await invoke('no_such_tool', {})).status, 404);
    const held = await invoke('send_email', {
      to: 'ana@customer.example',
      subject: 'Hi',
      body: 'x',
    });
    assert.equal(held.status, 202, held.text);
    const init = await postMcp(
      base,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'dashboard', version: '1' },
        },
      },
      key,
    );
    await init.text();
    await refuseOne();
    await world.tg.gate.flush();
    const m = await rest('GET', '/metrics', undefined, ADMIN);
    assert.equal(m.status, 200);
    exposition = m.text;
  });
  after(async () => {
    await world.close();
  });

  /** Holds the agents' one slot with an unfinished body; the next agent request is refused. */
  async function refuseOne(): Promise<void> {
    const held = request({
      host: '127.0.0.1',
      port: new URL(base).port,
      path: '/v1/sessions',
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': '9',
      },
    });
    held.on('error', () => {});
    held.write('{');
    try {
      for (let i = 0; i < 40; i++) {
        await new Promise((r) => setTimeout(r, 25));
        if ((await rest('POST', '/v1/sessions', {}, key)).status === 503) return;
      }
      assert.fail('no request was refused');
    } finally {
      held.destroy();
    }
  }

  /**
   * Metrics the dashboard queries that this traffic does not make a sample of (they are declared
   * all the same), and why.
   */
  const NO_SAMPLE_YET: Record<string, string> = {
    toolgate_tool_errors_total: 'no demo tool fails when it runs',
  };

  test('every metric a panel queries exists on /metrics, with samples after the traffic', () => {
    const types = declared(exposition);
    const queried = new Set<string>();
    for (const p of allPanels(dashboard))
      for (const t of p.targets ?? []) for (const n of metricNames(String(t.expr))) queried.add(n);
    for (const v of dashboard.templating?.list ?? []) {
      const query = (v.query as { query?: string } | undefined)?.query;
      // Grafana's label_values(metric, label): the metric is its first argument.
      const metric = typeof query === 'string' ? /^label_values\((\w+),/.exec(query)?.[1] : null;
      if (metric) queried.add(metric);
    }
    assert.ok(queried.size > 15, `read ${queried.size} names`);
    for (const name of queried) {
      assert.ok(name.startsWith('toolgate_'), `${name}: not a toolgate metric`);
      const family = familyOf(name, types);
      assert.ok(family, `${name} is not on /metrics`);
      if (family in NO_SAMPLE_YET) continue;
      assert.ok(labelsSeen(exposition, family) !== null, `${name}: no sample after the traffic`);
    }
  });

  test('docs/operations.md lists every metric on /metrics with its type and labels, and no other', () => {
    const doc = readFileSync('docs/operations.md', 'utf8');
    const section = doc.slice(doc.indexOf('\n## Metrics\n'));
    const body = section.slice(0, section.indexOf('\n## ', 5) + 1 || undefined);
    assert.ok(body.length > 100, 'docs/operations.md has a "Metrics" section');
    const rows = [...body.matchAll(/^\| `(toolgate_\w+)` \| (\w+) \|([^|]*)\| [^|]+ \|$/gm)].map(
      (m) => ({
        name: m[1] ?? '',
        type: m[2] ?? '',
        labels: [...(m[3] ?? '').matchAll(/`(\w+)`/g)].map((l) => l[1] ?? '').sort(),
      }),
    );
    const types = declared(exposition);
    // The default collectors' families are documented as a group, by their prefixes.
    const own = [...types.keys()].filter(
      (n) => !n.startsWith('toolgate_process_') && !n.startsWith('toolgate_nodejs_'),
    );
    assert.match(body, /`toolgate_process_\*`/);
    assert.match(body, /`toolgate_nodejs_\*`/);
    assert.deepEqual(rows.map((r) => r.name).sort(), own.sort(), 'documented = exposed');
    for (const r of rows) {
      assert.equal(r.type, types.get(r.name), `${r.name}: type`);
      const seen = labelsSeen(exposition, r.name);
      if (seen !== null) assert.deepEqual(r.labels, [...seen].sort(), `${r.name}: labels`);
    }
  });
});
