/**
 * @module The pin of an upstream tool (C3): SHA-256 over the canonical JSON (RFC 8785)
 * of its name, description and schemas. A later listing with another pin is a changed tool.
 */
import { canonicalJson, sha256Hex } from '../../core/index.js';

export interface ListedTool {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
}

export function pinOf(tool: ListedTool): string {
  const pinned = {
    name: tool.name,
    description: tool.description ?? null,
    inputSchema: tool.inputSchema ?? null,
    outputSchema: tool.outputSchema ?? null,
  };
  return `sha256:${sha256Hex(canonicalJson(pinned))}`;
}
