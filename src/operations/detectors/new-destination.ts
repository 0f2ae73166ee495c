/**
 * @module Detector: a destination host never seen before for a tool or for an agent. Fires only
 * once the tool (or agent) has made `min_history` egress calls, so a newly registered tool does
 * not alert on every first host.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../records/store/index.js';
import { addBounded, BoundedMap } from './bounded-map.js';
import { type Alert, alertOf, type Detector, hostsOf, type Observed } from './detector.js';

interface Seen {
  calls: number;
  hosts: Set<string>;
}

const MAX_KEYS = 10_000;
const MAX_HOSTS = 1_000;
const HISTORY_ROWS = 100_000;
/** How far back the known hosts are learned at start. */
const HISTORY_DAYS = 30;

export class NewDestinationDetector implements Detector {
  readonly name = 'new_destination' as const;
  readonly #minHistory: number;
  readonly #byTool = new BoundedMap<string, Seen>(MAX_KEYS);
  readonly #byAgent = new BoundedMap<string, Seen>(MAX_KEYS);

  constructor(options: { min_history: number }) {
    this.#minHistory = options.min_history;
  }

  async load(db: Kysely<Database>, now: Date): Promise<void> {
    const from = new Date(now.getTime() - HISTORY_DAYS * 86_400_000).toISOString();
    const rows = await db
      .selectFrom('audit_log')
      .select(['tool_id', 'agent_id', 'egress_host'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('kind', '=', 'call.pre')
      .where('egress_host', 'is not', null)
      .where('at', '>=', from)
      .groupBy(['tool_id', 'agent_id', 'egress_host'])
      .limit(HISTORY_ROWS)
      .execute();
    for (const row of rows) {
      const hosts = row.egress_host ? row.egress_host.split(',') : [];
      const n = Number(row.n);
      for (const [map, key] of [
        [this.#byTool, row.tool_id],
        [this.#byAgent, row.agent_id],
      ] as const) {
        if (!key) continue;
        const seen = map.upsert(key, () => ({ calls: 0, hosts: new Set() }));
        seen.calls += n;
        for (const h of hosts) addBounded(seen.hosts, h.trim().toLowerCase(), MAX_HOSTS);
      }
    }
  }

  observe(o: Observed): Alert[] {
    const r = o.record;
    if (r.kind !== 'call.pre') return [];
    const hosts = hostsOf(r);
    if (hosts.length === 0) return [];
    const tool = r.toolId
      ? this.#byTool.upsert(r.toolId, () => ({ calls: 0, hosts: new Set() }))
      : null;
    const agent = r.agentId
      ? this.#byAgent.upsert(r.agentId, () => ({ calls: 0, hosts: new Set() }))
      : null;
    const newForTool =
      tool && tool.calls >= this.#minHistory ? hosts.filter((h) => !tool.hosts.has(h)) : [];
    const newForAgent =
      agent && agent.calls >= this.#minHistory ? hosts.filter((h) => !agent.hosts.has(h)) : [];
    for (const seen of [tool, agent]) {
      if (!seen) continue;
      seen.calls += 1;
      for (const h of hosts) addBounded(seen.hosts, h, MAX_HOSTS);
    }
    if (newForTool.length === 0 && newForAgent.length === 0) return [];
    const scopes = [
      ...(newForTool.length > 0 ? [`tool ${r.toolId}`] : []),
      ...(newForAgent.length > 0 ? [`agent ${r.agentId}`] : []),
    ];
    return [
      alertOf(this.name, o, `new destination for ${scopes.join(' and ')}`, {
        new_for_tool: newForTool,
        new_for_agent: newForAgent,
      }),
    ];
  }
}
