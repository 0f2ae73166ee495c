/**
 * @module Relays an upstream tool's progress to the agent that asked for it: each report goes out
 * as `notifications/progress` under the agent's own progress token, on the stream of the agent's
 * request. The upstream never learns the agent's token (the gate's MCP client sends its own), and
 * what it sends is bounded before it reaches the agent.
 */
import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { CallProgress } from '../../gate/index.js';

/** Longest progress message passed on; an upstream cannot push a document through progress. */
const MAX_MESSAGE_CHARS = 1_000;
/** Reports relayed per call at most: a chatty or hostile upstream cannot flood the agent. */
const MAX_REPORTS = 10_000;

export interface ProgressRelay {
  /** The gate's progress callback (CallOptions.onProgress). */
  readonly onProgress: (progress: CallProgress) => void;
  /** Settles once every report relayed so far is written: the result must not overtake them. */
  flush(): Promise<void>;
}

/**
 * The progress relay of one agent request. Only reports whose `progress` increases are passed on
 * (the MCP rule; a repeated or falling value is dropped, as are non-finite ones). Never throws: a
 * report the agent's transport cannot take is dropped, the call goes on.
 */
export function progressRelay(
  token: ProgressToken,
  send: (notification: ServerNotification) => Promise<void>,
): ProgressRelay {
  let last = Number.NEGATIVE_INFINITY;
  let sent = 0;
  let written: Promise<void> = Promise.resolve();
  const onProgress = (p: CallProgress): void => {
    if (!Number.isFinite(p.progress) || p.progress <= last || sent >= MAX_REPORTS) return;
    last = p.progress;
    sent += 1;
    const total = p.total !== undefined && Number.isFinite(p.total) ? { total: p.total } : {};
    const message =
      typeof p.message === 'string' ? { message: p.message.slice(0, MAX_MESSAGE_CHARS) } : {};
    const sending = send({
      method: 'notifications/progress',
      params: { progressToken: token, progress: p.progress, ...total, ...message },
    }).catch(() => {});
    written = written.then(() => sending);
  };
  return { onProgress, flush: () => written };
}
