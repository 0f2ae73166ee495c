/**
 * @module `toolgate mcp` over stdio in tests: a folder holding a demo gateway (its catalog applied
 * and reviewed, on `tg.db`, with the data folder `data`), and the spawn parameters of the built
 * CLI serving one agent credential on it, for either SDK's stdio client transport.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Actor } from '../../src/core/index.js';
import type { Gateway, ToolgateOptions } from '../../src/host/toolgate.js';
import { cleanEnv, ensureBuilt, MAIN } from './cli.js';
import { openDemoGateway } from './world.js';

export const STDIO_ADMIN: Actor = { id: 'test-admin', via: 'library' };

export interface StdioFolder {
  readonly dir: string;
  readonly db: string;
  readonly tg: Gateway;
  /**
   * The built CLI's `mcp` command on this folder, serving `agentKey` (both SDKs take this). A call
   * that waits for approval is held `approvalWait` seconds (`--approval-wait`; default 0 here,
   * answered at once: these suites decide after they saw the pending answer).
   */
  server(
    agentKey: string,
    approvalWait?: number,
  ): {
    command: string;
    args: string[];
    env: Record<string, string>;
    stderr: 'pipe';
  };
  /** Closes the gateway and removes the folder. */
  close(): Promise<void>;
}

export async function openStdioFolder(
  prefix: string,
  options: ToolgateOptions = {},
): Promise<StdioFolder> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), `toolgate-${prefix}-`));
  const db = `sqlite:${join(dir, 'tg.db')}`;
  const tg = await openDemoGateway({ db, ...options }, STDIO_ADMIN);
  return {
    dir,
    db,
    tg,
    server: (agentKey, approvalWait = 0) => ({
      command: process.execPath,
      args: [
        MAIN,
        '--db',
        db,
        '--data-dir',
        join(dir, 'data'),
        'mcp',
        '--approval-wait',
        String(approvalWait),
      ],
      env: { ...(cleanEnv() as Record<string, string>), TOOLGATE_AGENT_KEY: agentKey },
      stderr: 'pipe',
    }),
    close: async () => {
      await tg.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
}
