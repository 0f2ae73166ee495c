/**
 * The 2025 list-changed watcher and an agent disabled while its MCP session is open (attack round
 * 8, F12): the refresh of that session fails with AGENT_NOT_FOUND; the watcher says so once and
 * stops refreshing it, instead of logging the failure at every check. The benign neighbour:
 * another agent's session keeps being refreshed and notified.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AgentApi } from '../../src/api/index.js';
import { ToolgateError } from '../../src/core/index.js';
import { ListChangedWatcher } from '../../src/edge/mcp/list-changed.js';

test('a session of a disabled agent is logged once and no longer refreshed; another keeps its notifications', async () => {
  let revision = 0;
  const refreshed: string[] = [];
  const agent = {
    revisions: async () => ({ catalog: 1, identity: ++revision }),
    sessions: {
      refresh: async (sessionId: string) => {
        refreshed.push(sessionId);
        if (sessionId === 'ses_victim')
          throw new ToolgateError('AGENT_NOT_FOUND', 'no agent victim', { agentId: 'victim' });
        return { changed: true };
      },
    },
  } as unknown as AgentApi;
  const notified: string[] = [];
  const session = (agentId: string, sessionId: string) => ({
    server: {
      notification: async ({ method }: { method: string }) => {
        notified.push(`${sessionId} ${method}`);
      },
    } as unknown as Server,
    binding: { sessionId, principal: { agentId } as never },
  });
  const sessions = [session('victim', 'ses_victim'), session('support-bot', 'ses_support')];
  const logged: string[] = [];
  const watcher = new ListChangedWatcher(
    agent,
    () => sessions,
    (err) => logged.push(String(err)),
  );
  for (let i = 0; i < 4; i++) await watcher.check();
  assert.equal(logged.length, 1, logged.join('\n'));
  assert.match(logged[0] ?? '', /agent victim is disabled or removed/);
  assert.equal(refreshed.filter((s) => s === 'ses_victim').length, 1);
  // The benign neighbour: refreshed at every move of the revisions, notified each time.
  assert.equal(refreshed.filter((s) => s === 'ses_support').length, 4);
  assert.equal(notified.filter((n) => n.startsWith('ses_support')).length, 12);
});
