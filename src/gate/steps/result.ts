/**
 * @module The `result` step: what the tool returned is checked before anyone sees it — a credential
 * it echoed is scrubbed (and the record says so), then its size and output schema, then every
 * string in it is scanned for instruction-like text, credentials and personal data and labelled,
 * masked or blocked as the tool's result policy says (content/). A failed run passes through
 * unchanged. Step order: docs/architecture.md §3.
 */
import type { ToolDefinition } from '../../domain/catalog/index.js';
import { redactSecrets } from '../../domain/credentials/index.js';
import { type LabelledFinding, MAX_SCAN_DEPTH, scanResult } from '../../domain/text-trust/index.js';
import type { CompiledTool } from '../tool-cache.js';
import type { ExecuteExtra, ExecuteResult, ExecuteRun } from './run-result.js';
import { type CallState, CONTINUE, type StepResult } from './step.js';

export function resultStep(s: CallState): StepResult {
  s.result = checkResult(s.def, s.compiled, s.run);
  return CONTINUE;
}

/** The run's result as the caller may receive it, or why it may not. Never throws. */
export function checkResult(
  def: ToolDefinition,
  compiled: CompiledTool,
  run: ExecuteRun,
): ExecuteResult {
  if (!run.ok) return run;
  let output = run.output;
  // A tool that echoes its credential gets it scrubbed, and the record says so.
  let redacted = false;
  if (run.redact.length > 0) {
    const scrubbed = redactSecrets(output, run.redact);
    output = scrubbed.value;
    redacted = scrubbed.redacted;
  }
  const extra: Partial<ExecuteExtra> = redacted ? { ...run.extra, redacted } : run.extra;
  const text = JSON.stringify(output ?? null);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > def.sandbox.limits.output_bytes) {
    return {
      ok: false,
      code: 'OUTPUT_INVALID',
      rule: 'result.size',
      message: `the result is over ${def.sandbox.limits.output_bytes} bytes`,
      bytes,
      ...extra,
    };
  }
  // An upstream MCP result's structured content was checked by the mcp runtime, where its shape
  // is known; a tool error result is passed on as the upstream gave it.
  if (def.runtime.kind !== 'mcp' && !compiled.validateOutput(output)) {
    return {
      ok: false,
      code: 'OUTPUT_INVALID',
      rule: 'result.schema',
      message: 'the tool returned a result that does not match its output schema',
      bytes,
      ...extra,
    };
  }
  const scan = scanResult(def, output);
  if (scan.blocked) {
    return {
      ok: false,
      code: 'RESULT_BLOCKED',
      rule: `result.${scan.blocked.rule}`,
      message: `the result was withheld: ${describe(scan.blocked)} (${scan.blocked.rule} at ${scan.blocked.pointer || '/'})`,
      bytes,
      ...extra,
      trust: scan.label,
    };
  }
  return { ok: true, output: scan.output, bytes, ...extra, trust: scan.label };
}

function describe(f: LabelledFinding): string {
  if (f.rule === 'depth') return `it is nested deeper than ${MAX_SCAN_DEPTH} levels`;
  if (f.kind === 'injection') return 'it held instruction-like text';
  return f.kind === 'secret' ? 'it held a credential' : 'it held personal data';
}
