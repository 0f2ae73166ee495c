/**
 * @module The `headers` step: a 2026-07-28 MCP `tools/call` over HTTP mirrors the arguments its
 * tool's input schema marks with `x-mcp-header` into `Mcp-Param-*` headers, so intermediaries can
 * act on them without reading the body; each must agree with the argument it mirrors. Checked
 * here, after `resolve` and `lifecycle`, against the declarations of the very version the call
 * resolved (read once per version by the tool cache): the front looks nothing up, and a version
 * registered a moment ago is checked with its own declarations. A call that brings no such
 * headers (REST, the 2025 eras, stdio, the library) has nothing to agree. Step order:
 * docs/architecture.md §3.
 */
import { paramHeaderMismatch } from '../../domain/catalog/index.js';
import { type CallState, CONTINUE, refuse, type StepResult } from './step.js';

export function headersStep(s: CallState): StepResult {
  const sent = s.ctx.mcpParamHeaders;
  if (sent === undefined) return CONTINUE;
  const declared = s.compiled.paramHeaders;
  if (declared.length === 0) return CONTINUE;
  const mismatch = paramHeaderMismatch(declared, s.args ?? {}, sent);
  if (mismatch === null) return CONTINUE;
  return refuse('MCP_HEADER_MISMATCH', 'mcp.header_mismatch', mismatch.reason, {
    header: mismatch.header,
    reason: mismatch.reason,
  });
}
