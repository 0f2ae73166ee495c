/**
 * @module Cross-field checks of a definition's runtime (docs/architecture.md §6, C3): header
 * injection of a credential needs an http runtime, and a third-party (or open-source) command tool declares the
 * `code_hash` of the files its argv names, so the review that lets it run binds the code that
 * runs (without one, whatever is at that path later would run under the approval).
 */
import { type Problem, problem } from '../../core/index.js';
import type { ToolDefinition } from './tool-definition.js';

type RuntimeFields = Pick<ToolDefinition, 'runtime' | 'provenance' | 'code_hash' | 'credentials'>;

export function checkRuntimeBindings(
  raw: RuntimeFields,
  wellFormed: (...fields: (keyof ToolDefinition)[]) => boolean,
): Problem[] {
  const problems: Problem[] = [];
  if (
    wellFormed('credentials', 'runtime') &&
    raw.credentials?.inject === 'header' &&
    raw.runtime.kind !== 'http'
  ) {
    problems.push(
      problem(
        '/credentials/inject',
        'header injection needs an http runtime',
        'credentials.inject',
      ),
    );
  }
  if (
    wellFormed('provenance', 'runtime', 'code_hash') &&
    (raw.provenance === 'third_party' || raw.provenance === 'oss') &&
    raw.runtime.kind === 'command' &&
    raw.code_hash === undefined
  ) {
    problems.push(
      problem(
        '/code_hash',
        'a third-party or open-source command tool must declare the code_hash of its files (toolgate tools hash -- ARGV): its review binds that code',
        'code_hash.required',
      ),
    );
  }
  // A tool run by an upstream provider is bound to the provider's program (runtime.launch), as
  // classifying the provider's tool binds it: one registered by hand without it would run
  // whatever the provider is later changed to, under this review.
  if (wellFormed('runtime') && raw.runtime.kind === 'mcp' && raw.runtime.launch === undefined) {
    problems.push(
      problem(
        '/runtime/launch',
        "a tool run by an upstream provider names the launch it is reviewed for: classify the provider's tool (providers classify) rather than registering it by hand",
        'runtime.launch_required',
      ),
    );
  }
  return problems;
}
