/**
 * Cursor pagination of the REST lists and the CLI lists, on every backend: a walk
 * with `?cursor=…&limit=…` returns every entry exactly once in a stable order while new entries
 * arrive, ends with `next_cursor: null`, and a forged cursor or one of another list is refused
 * as INPUT_INVALID. Before this, /v1/approvals showed only the newest 500 and older requests
 * vanished from view.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { ensureBuilt, ROOT, runCli } from '../support/cli.js';
import { openWorld, type World } from '../support/world.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const admin = { id: 'test-admin', via: 'library' as const };

for (const backend of backends()) {
  describe(`REST list pagination (${backend.name})`, () => {
    let world: World;
    let tg: Gateway;
    let base: string;
    let supportKey: string;
    let dbUrl: string;
    const masterKey = MasterKey.generate();

    before(async () => {
      // The demo's restricted and third-party tools are drafts until reviewed: the world reviews them.
      world = await openWorld({
        backend,
        demo: true,
        actor: admin,
        keys: ['support-bot'],
        options: { masterKey },
        rest: { adminToken: ADMIN_TOKEN },
      });
      ({ tg, base } = world);
      dbUrl = world.db;
      supportKey = world.keys['support-bot'] ?? '';
    });

    after(async () => {
      await world.close();
    });

    async function get(path: string, token = ADMIN_TOKEN) {
      const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
      // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
      return { status: res.status, body: (await res.json()) as any };
    }

    async function post(path: string, body: unknown, token = supportKey) {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
      return { status: res.status, body: (await res.json()) as any };
    }

    /** Two pending approvals per session (send_email allows two calls per run). */
    async function requestApprovals(sessions: number, tag: string): Promise<string[]> {
      const ids: string[] = [];
      for (let s = 0; s < sessions; s++) {
        const session = (await post('/v1/sessions', {})).body.id as string;
        for (let i = 0; i < 2; i++) {
          const r = await post(`/v1/sessions/${session}/calls`, {
            tool: 'send_email',
            arguments: { to: `${tag}${s}x${i}@customer.example`, subject: 'Hello', body: 'Hi.' },
          });
          assert.equal(r.status, 202);
          ids.push(r.body.approval_id);
        }
      }
      return ids;
    }

    /** Follows next_cursor to the end; `between` runs after each page. */
    async function walk(
      path: string,
      field: string,
      limit: number,
      between: (page: number) => Promise<void> = async () => {},
    ) {
      const seen: { id?: string; seq?: number; created_at?: string }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const sep = path.includes('?') ? '&' : '?';
        const q = `${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
        const r = await get(`${path}${q}`);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.ok(r.body[field].length <= limit);
        seen.push(...r.body[field]);
        cursor = r.body.next_cursor;
        pages += 1;
        await between(pages);
        assert.ok(pages < 100, 'the walk ends');
      } while (cursor !== null);
      return { seen, pages };
    }

    test('approvals: every request exactly once, newest first, while new ones arrive', async () => {
      const original = await requestApprovals(4, 'old');
      const arrived: string[] = [];
      const { seen, pages } = await walk('/v1/approvals', 'approvals', 3, async (page) => {
        // New requests arrive in the middle of the walk: they sit above it.
        if (page === 1) arrived.push(...(await requestApprovals(1, 'new')));
      });
      const ids = seen.map((a) => a.id);
      assert.equal(pages, 3);
      assert.equal(new Set(ids).size, ids.length, 'nothing repeated');
      assert.deepEqual([...ids].sort(), [...original].sort(), 'nothing skipped, nothing new');
      const keys = seen.map((a) => `${a.created_at}|${a.id}`);
      assert.deepEqual(keys, [...keys].sort().reverse(), 'newest first');
      // A fresh walk starts with the newcomers.
      const first = await get('/v1/approvals?limit=2');
      assert.deepEqual(
        first.body.approvals.map((a: { id: string }) => a.id).sort(),
        [...arrived].sort(),
      );
      // The status filter pages the same way.
      const pending = await walk('/v1/approvals?status=pending', 'approvals', 4);
      assert.equal(pending.seen.length, original.length + arrived.length);
    });

    test('events: a walk by cursor sees new events at its end, none twice', async () => {
      const before = (await walk('/v1/events', 'events', 500)).seen.length;
      let added = false;
      const { seen } = await walk('/v1/events', 'events', 7, async (page) => {
        if (page === 1 && !added) {
          added = true;
          await tg.config.apply(
            [{ kind: 'Grant', spec: { agent: 'ops-bot', capabilities: ['docs:extra'] } }],
            admin,
          );
        }
      });
      const seqs = seen.map((e) => e.seq as number);
      assert.equal(new Set(seqs).size, seqs.length);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      );
      assert.ok(seqs.length > before, 'the event that arrived during the walk is in it');
    });

    test('tools, agents, providers, secrets and changes page to the same set as one big page', async () => {
      await tg.secrets.set({ toolId: 'send_email', name: 'smtp' }, 'value-one-0123456789', admin);
      await tg.secrets.set({ toolId: 'get_order', name: 'db' }, 'value-two-0123456789', admin);
      for (const [path, field, key] of [
        ['/v1/tools', 'tools', (t: Record<string, string>) => `${t.id}@${t.version}`],
        ['/v1/agents', 'agents', (a: Record<string, string>) => a.id],
        ['/v1/providers', 'providers', (p: Record<string, string>) => p.name],
        ['/v1/secrets', 'secrets', (s: Record<string, string>) => `${s.tool_id}/${s.name}`],
        ['/v1/changes', 'changes', (c: Record<string, string>) => c.id],
      ] as const) {
        const whole = await get(`${path}?limit=500`);
        assert.equal(whole.status, 200, path);
        assert.equal(whole.body.next_cursor, null, `${path}: one page holds all`);
        const paged = await walk(path, field, 1);
        const all = whole.body[field].map(key);
        assert.deepEqual(
          paged.seen.map((x) => key(x as Record<string, string>)),
          all,
          `${path}: same entries, same order`,
        );
        if (path === '/v1/tools') assert.ok(all.length >= 10);
      }
    });

    test('a forged cursor, one of another list, or a bad limit is INPUT_INVALID', async () => {
      const events = await get('/v1/events?limit=1');
      const foreign = events.body.next_cursor as string;
      assert.ok(foreign);
      for (const path of [
        `/v1/approvals?cursor=${foreign}`,
        '/v1/approvals?cursor=bm90LWEtY3Vyc29y',
        `/v1/tools?cursor=${foreign}`,
        `/v1/changes?cursor=${foreign}`,
      ]) {
        const r = await get(path);
        assert.equal(r.status, 400, path);
        assert.equal(r.body.code, 'INPUT_INVALID');
        assert.equal(r.body.details.problems[0].pointer, '/query/cursor');
      }
      for (const path of [
        '/v1/approvals?limit=0',
        '/v1/tools?limit=501',
        '/v1/agents?cursor=%2F',
      ]) {
        const r = await get(path);
        assert.equal(r.status, 400, path);
        assert.equal(r.body.code, 'INPUT_INVALID');
      }
    });

    test('cursors are authenticated: forged, altered, truncated or other-list ones are 400 on every paged route', async () => {
      const real = (await get('/v1/tools?limit=2')).body.next_cursor as string;
      // The MAC is the cursor's last 43 characters (base64url of an HMAC-SHA256).
      const mac = real.slice(-43);
      const ofEvents = (await get('/v1/events?limit=1')).body.next_cursor as string;
      // Each route with its list's name and a key of that list's shape: well formed, not issued.
      const routes: [string, string, (string | number)[]][] = [
        ['/v1/tools', 'tools', ['a', '1']],
        ['/v1/agents', 'agents', ['a']],
        ['/v1/events', 'events', [1]],
        ['/v1/approvals', 'approvals', [1]],
        ['/v1/approvals', 'approvals', ['2020-01-01T00:00:00.000Z', 'z']],
        ['/v1/changes', 'changes', ['2020-01-01T00:00:00.000Z', 'z']],
        ['/v1/providers', 'providers', ['a']],
        ['/v1/secrets', 'secrets', ['a', 'b', 'c']],
        ['/v1/reviews', 'reviews', ['2020-01-01T00:00:00.000Z', 'z']],
        ['/v1/runs', 'live-sessions', ['2020-01-01T00:00:00.000Z', 'z']],
        ['/v1/operators', 'operators', ['a']],
      ];
      const flip = (c: string) => c.slice(0, -1) + (c.endsWith('A') ? 'B' : 'A');
      for (const [path, list, key] of routes) {
        const payload = Buffer.from(JSON.stringify({ l: list, k: key })).toString('base64url');
        for (const cursor of [
          payload, // the forged cursor as an attacker writes it
          `${payload}${mac}`, // a real cursor's MAC on another payload
          `${payload}${'A'.repeat(43)}`,
          flip(real),
          real.slice(0, -3),
          real.slice(0, -43),
          `${real}${mac}`,
          path === '/v1/events' ? real : ofEvents, // a real cursor of another list
        ]) {
          const r = await get(`${path}?cursor=${encodeURIComponent(cursor)}`);
          assert.equal(r.status, 400, `${path} ${cursor}`);
          assert.equal(r.body.code, 'INPUT_INVALID');
          assert.equal(r.body.details.problems[0].pointer, '/query/cursor');
        }
      }
      // The benign neighbour: the real cursor goes on, here and on a second gateway (a replica)
      // over the same database.
      const next = await get(`/v1/tools?limit=2&cursor=${encodeURIComponent(real)}`);
      assert.equal(next.status, 200);
      assert.equal(next.body.tools.length, 2);
      const replica = await openGateway({ db: dbUrl, masterKey });
      const replicaApp = await buildServer(replica, { adminToken: ADMIN_TOKEN });
      try {
        const replicaBase = await replicaApp.listen({ host: '127.0.0.1', port: 0 });
        const res = await fetch(
          `${replicaBase}/v1/tools?limit=2&cursor=${encodeURIComponent(real)}`,
          {
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          },
        );
        assert.equal(res.status, 200);
        const body = (await res.json()) as { tools: { id: string; version: string }[] };
        assert.deepEqual(body.tools, next.body.tools);
      } finally {
        await replicaApp.close();
        await replica.close();
      }
    });
  });
}

describe('CLI list pagination', () => {
  let dir: string;

  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-page-cli-'));
  });

  after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

  test('tools list --limit walks with --cursor; the next cursor is in --json and in the text', async () => {
    const applied = await runCli(dir, ['apply', '-f', join(ROOT, 'demo', 'catalog.yaml')]);
    assert.equal(applied.code, 0, applied.stderr);
    const all = JSON.parse(
      (await runCli(dir, ['--json', 'tools', 'list', '--limit', '500'])).stdout,
    );
    assert.equal(all.next_cursor, null);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const args: string[] = ['--json', 'tools', 'list', '--limit', '4'];
      if (cursor) args.push('--cursor', cursor);
      const run = await runCli(dir, args);
      assert.equal(run.code, 0, run.stderr);
      const page = JSON.parse(run.stdout) as {
        tools: { id: string }[];
        next_cursor: string | null;
      };
      ids.push(...page.tools.map((t) => t.id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    assert.deepEqual(
      ids,
      all.tools.map((t: { id: string }) => t.id),
    );
    const text = await runCli(dir, ['tools', 'list', '--limit', '2']);
    assert.match(text.stdout, /more: --cursor [A-Za-z0-9_-]+/);
    const bad = await runCli(dir, ['--json', 'approvals', 'list', '--cursor', 'forged']);
    assert.equal(bad.code, 2);
    assert.equal(JSON.parse(bad.stdout).error.code, 'INPUT_INVALID');
  });

  test('a forged, altered or other-list cursor is refused; a real one works in another process', async () => {
    const applied = await runCli(dir, ['apply', '-f', join(ROOT, 'demo', 'catalog.yaml')]);
    assert.equal(applied.code, 0, applied.stderr);
    const first = JSON.parse(
      (await runCli(dir, ['--json', 'tools', 'list', '--limit', '2'])).stdout,
    );
    const real = first.next_cursor as string;
    assert.ok(real);
    // Each CLI run is its own process: the key comes from the database, not from memory.
    const second = await runCli(dir, ['--json', 'tools', 'list', '--limit', '2', '--cursor', real]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).tools.length, 2);
    const forged = Buffer.from(JSON.stringify({ l: 'approvals', k: [1] })).toString('base64url');
    const mac = real.slice(-43);
    for (const [list, cursor] of [
      ['approvals', forged], // the reproduction: accepted, "no approvals", before the fix
      ['approvals', `${forged}${mac}`],
      ['tools', `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`],
      ['tools', real.slice(0, -4)],
      ['grants', real],
      ['agents', real],
    ] as const) {
      const run = await runCli(dir, ['--json', list, 'list', '--cursor', cursor]);
      assert.equal(run.code, 2, `${list} ${cursor}: ${run.stdout}`);
      assert.equal(JSON.parse(run.stdout).error.code, 'INPUT_INVALID');
    }
  });
});
