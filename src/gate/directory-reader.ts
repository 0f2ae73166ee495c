/**
 * @module How toolgate calls a directory tool for a live destination set (docs/architecture.md
 * §3 step `policy`): as itself, never as an agent — no session, no agent credential, no user; the tool's
 * own credential (if it declares one) through the broker, its runtime by kind, its output schema
 * checked by the runtime. Only a read tool that is offerable and not quarantined is called.
 */

import { timeOrderedId } from '../core/index.js';
import type { CatalogService } from '../domain/catalog/index.js';
import type { DirectoryReader, DirectorySource } from '../domain/policy/index.js';
import { execute } from './steps/execute.js';
import type { StepDependencies } from './steps/step.js';

/** The principal a directory call runs as: toolgate itself (never an agent id). */
export const DIRECTORY_AGENT = 'toolgate:directory';

export function directoryReader(deps: StepDependencies, catalog: CatalogService): DirectoryReader {
  return async (source: DirectorySource) => {
    const detail = await catalog.get(source.tool, source.version);
    if (
      detail.quarantined ||
      (detail.lifecycle !== 'active' && detail.lifecycle !== 'deprecated')
    ) {
      throw new Error('the directory tool is not active');
    }
    if (detail.definition.action_class !== 'read') {
      throw new Error('a directory tool must be a read tool');
    }
    const compiled = await deps.tools.compiled(source.tool, source.version);
    if (compiled === null) throw new Error('the directory tool is not registered');
    const args: Record<string, unknown> = {};
    if (!compiled.validateInput(args)) {
      throw new Error('the directory tool needs arguments; it must take none');
    }
    const run = await execute(deps, detail.definition, args, compiled, {
      callId: timeOrderedId('call_'),
      sessionId: `directory:${source.tool}`,
      agentId: DIRECTORY_AGENT,
      userId: null,
      credential: null,
      destinations: new Set(),
      egressLimit: undefined,
      storedEgressBytes: 0,
    });
    if (!run.ok) throw new Error(`the directory tool failed (${run.rule})`);
    return run.output;
  };
}
