/**
 * @module A session's tools as a client reads them: MCP `tools/list` entries (with the majors a
 * caller may pin), OpenAI function tools or Anthropic tools.
 */
import semver from 'semver';
import type { ToolVersionDetail } from '../catalog/index.js';
/**
 * Where an MCP `tools/list` entry names the majors a caller may pin, and where a `tools/call` pins
 * one (`_meta["io.toolgate/version"]`, docs/tools-and-catalog.md, "Versions side by side").
 */
export const VERSIONS_META_KEY = 'io.toolgate/versions';

export interface OfferedMajor {
  readonly major: number;
  readonly version: string;
  readonly lifecycle: 'active' | 'deprecated';
  readonly retire_at: string | null;
  readonly default: boolean;
}

export function offeredMajor(detail: ToolVersionDetail, isDefault: boolean): OfferedMajor {
  return {
    major: semver.major(detail.version),
    version: detail.version,
    lifecycle: detail.lifecycle === 'deprecated' ? 'deprecated' : 'active',
    retire_at: detail.lifecycle === 'deprecated' ? detail.retire_at : null,
    default: isDefault,
  };
}

export function isOfferableState(state: string): boolean {
  return state === 'active' || state === 'deprecated';
}

export type ToolFormat = 'mcp' | 'openai' | 'anthropic';

function describe(detail: ToolVersionDetail): string {
  return detail.lifecycle === 'deprecated' && detail.retire_at
    ? `${detail.description} (Deprecated: retires ${detail.retire_at.slice(0, 10)}.)`
    : detail.description;
}

export function exportTool(name: string, detail: ToolVersionDetail, format: ToolFormat): unknown {
  const d = detail.definition;
  switch (format) {
    case 'mcp':
      return {
        name,
        title: d.name,
        description: describe(detail),
        inputSchema: d.input_schema,
        // An upstream tool that declared no output schema returns no structured content: a
        // client would refuse its results if one were announced.
        ...(d.output_schema['x-toolgate'] === 'unstructured'
          ? {}
          : { outputSchema: d.output_schema }),
        annotations: {
          readOnlyHint: d.action_class === 'read',
          destructiveHint:
            d.action_class === 'irreversible' || d.action_class === 'permission_change',
          idempotentHint: d.idempotent,
          openWorldHint: d.egress.mode !== 'none',
        },
      };
    case 'openai':
      return {
        type: 'function',
        function: { name, description: describe(detail), parameters: d.input_schema },
      };
    case 'anthropic':
      return { name, description: describe(detail), input_schema: d.input_schema };
  }
}
