/**
 * @module The shapes a running tool reports, shared by the gate, the runtimes and the upstream
 * pool: an upstream MCP tool's result and one progress report. Types only; they live in core so
 * that the runtimes and providers never import the gate that calls them (docs/architecture.md §2).
 */

/** An upstream MCP tool's result after the gate's checks (content passed through as given). */
export interface McpToolResult {
  readonly content: readonly Record<string, unknown>[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** One progress report of a running call, as the upstream MCP tool sent it. */
export interface CallProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}
