/**
 * @module Detector: a read-only agent (every tool its grants unlock is a `read`) attempting a
 * tool that writes or sends — allowed, denied or waiting for approval. Once per session and tool.
 */
import { BoundedMap } from './bounded-map.js';
import { type Alert, alertOf, type Detector, isAttempt, type Observed } from './detector.js';

const MAX_SEEN = 50_000;

export class ReadOnlyWriteDetector implements Detector {
  readonly name = 'read_only_write' as const;
  readonly #seen = new BoundedMap<string, true>(MAX_SEEN);

  observe(o: Observed): Alert[] {
    const r = o.record;
    if (!isAttempt(r) || o.agentReadOnly !== true || !o.tool) return [];
    if (o.tool.actionClass === 'read') return [];
    const key = `${r.sessionId ?? ''}|${o.tool.id}`;
    if (this.#seen.get(key)) return [];
    this.#seen.set(key, true);
    return [
      alertOf(
        this.name,
        o,
        `read-only agent ${r.agentId} attempted ${o.tool.actionClass} tool ${o.tool.id}`,
        {
          action_class: o.tool.actionClass,
          attempt: r.decision,
          ...(r.code ? { code: r.code } : {}),
        },
      ),
    ];
  }
}
