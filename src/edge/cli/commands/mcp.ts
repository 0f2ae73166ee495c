/**
 * @module `toolgate mcp`: one agent over MCP on stdio; the stdio front gets the agent API only.
 */
import { type Command, Option } from 'commander';
import { ToolgateError, visibleEscapes } from '../../../core/index.js';
import type { Toolgate } from '../../../host/toolgate.js';
import { approvalWaitOption, type GlobalOptions, openForAgent, VERSION } from '../command-kit.js';
import { reportError } from '../output.js';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve one agent over MCP on stdio (for a local agent; HTTP clients use /mcp)')
    .addOption(
      new Option(
        '--agent-key <key>',
        'the agent API key or JWT (prefer the environment variable)',
      ).env('TOOLGATE_AGENT_KEY'),
    )
    .addOption(approvalWaitOption())
    .action(async (opts: { agentKey?: string; approvalWait: number }) => {
      const globals = program.opts<GlobalOptions>();
      const log = (line: string) => process.stderr.write(`${visibleEscapes(line)}\n`);
      let tg: Toolgate | null = null;
      try {
        if (!opts.agentKey) {
          throw new ToolgateError(
            'UNAUTHENTICATED',
            'set TOOLGATE_AGENT_KEY (or --agent-key) to the agent API key or JWT',
            {},
          );
        }
        tg = await openForAgent(globals);
        const { serveMcpStdio } = await import('../../mcp/index.js');
        await serveMcpStdio(tg, {
          version: VERSION,
          token: opts.agentKey,
          log,
          approvalWaitMs: opts.approvalWait * 1000,
        });
      } catch (err) {
        // stdout belongs to JSON-RPC: errors go to stderr only (as JSON with --json).
        process.exitCode = reportError(err, globals.json === true, process.stderr);
      } finally {
        await tg?.close();
      }
    });
}
