/**
 * @module Result shaping for both MCP eras (C15, docs/architecture.md §6): the gate's neutral
 * answer rendered as an MCP tool result, a refusal that happened before the gate could decide,
 * an entry call's (resources/read, prompts/get) answer or refusal, and a refusal as a JSON-RPC
 * error's number, message and data. The gate never speaks MCP; this is the one place that does,
 * for the session servers (gateway-server.ts) and the stateless ones (modern-server.ts) alike.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type GateDecision, TRUST_META_KEY } from '../../api/index.js';
import {
  ERROR_CODES,
  type ErrorCode,
  isToolgateError,
  type McpToolResult,
  ToolgateError,
} from '../../core/index.js';
import { whereDecided } from './approval-hold.js';
import { DEPRECATION_META_KEY } from './version-meta.js';

const META = 'toolgate/decision';
/** A pending approval's code on this wire; from the one catalogue (docs/architecture.md §7). */
const PENDING_CODE = 'APPROVAL_REQUIRED' satisfies ErrorCode;

/**
 * An upstream provider's result inside an allowed decision (the gate's `outputForm: 'upstream'`),
 * as the provider gave it once the gate checked it; undefined for a tool's own value.
 */
export function upstreamResult(decision: GateDecision): McpToolResult | undefined {
  return decision.kind === 'allow' && decision.outputForm === 'upstream'
    ? (decision.output as McpToolResult)
    : undefined;
}

/** The gate's decision as an MCP tool result. */
export function toolResult(decision: GateDecision): CallToolResult {
  switch (decision.kind) {
    case 'allow': {
      const meta = {
        [META]: {
          kind: 'allow',
          call_id: decision.callId,
          tool: decision.toolId,
          version: decision.version,
          warnings: decision.warnings,
        },
        // Where the text came from and what the gateway's scan found in it (docs/policies.md, "Results are labelled and scanned").
        ...(decision.trust ? { [TRUST_META_KEY]: decision.trust } : {}),
        // A deprecated version's notice: when it retires and what to move to (C2).
        ...(decision.deprecation ? { [DEPRECATION_META_KEY]: decision.deprecation } : {}),
      };
      const r = upstreamResult(decision);
      if (r) {
        // An upstream provider's result, checked by the gate, passed on as the upstream gave it.
        return {
          content: r.content as CallToolResult['content'],
          ...(r.structuredContent !== undefined ? { structuredContent: r.structuredContent } : {}),
          ...(r.isError === true ? { isError: true } : {}),
          _meta: meta,
        };
      }
      const output = decision.output;
      const structured =
        typeof output === 'object' && output !== null && !Array.isArray(output)
          ? { structuredContent: output as Record<string, unknown> }
          : {};
      return {
        content: [{ type: 'text', text: JSON.stringify(output ?? null) }],
        ...structured,
        _meta: meta,
      };
    }
    case 'pending_approval':
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text:
              `${PENDING_CODE}: ${decision.message}. Approval id: ${decision.approvalId}; ` +
              `${whereDecided(decision.approvalId)}. ` +
              `The call waiting for approval: ${JSON.stringify(decision.rendered)}`,
          },
        ],
        _meta: {
          [META]: {
            kind: 'pending_approval',
            code: PENDING_CODE,
            call_id: decision.callId,
            approval_id: decision.approvalId,
            rendered: decision.rendered,
            message: decision.message,
          },
        },
      };
    case 'deny':
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: `${decision.code} (rule ${decision.rule}): ${decision.message}`,
          },
        ],
        _meta: {
          [META]: {
            kind: 'deny',
            code: decision.code,
            rule: decision.rule,
            message: decision.message,
            call_id: decision.callId,
            ...(decision.details !== undefined ? { details: decision.details } : {}),
          },
        },
      };
  }
}

/** A refusal that happened before the gate could decide (session gone, store down). */
export function failure(code: ErrorCode, message: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}` }],
    _meta: { [META]: { kind: 'deny', code, rule: `mcp.${code.toLowerCase()}`, message } },
  };
}

/**
 * A tools/call that threw instead of deciding, as a tool result: the store down keeps its code,
 * and so does a credential that no longer holds (a stdio connection proves it on every request,
 * live-agent.ts); anything else is INTERNAL and logged (never echoed). A gone session is each
 * era's own answer.
 */
export function failureFor(err: unknown, onError: ((err: unknown) => void) | undefined) {
  if (isToolgateError(err) && err.code === 'STORE_UNAVAILABLE') {
    return failure(err.code, 'the gateway cannot reach its database; retry later');
  }
  if (isToolgateError(err) && err.code === 'UNAUTHENTICATED') return failure(err.code, err.message);
  onError?.(err);
  return failure('INTERNAL', 'an unexpected error; it has been logged');
}

/** A JSON-RPC error as both SDKs' error classes take it: number, message, data. */
export interface RpcErrorParts {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * A refusal as a JSON-RPC error of the catalogue (docs/architecture.md §7); an unknown error is
 * logged and answered INTERNAL, never echoed.
 */
export function rpcErrorOf(err: unknown, onError?: (err: unknown) => void): RpcErrorParts {
  if (isToolgateError(err)) {
    return { code: ERROR_CODES[err.code].jsonRpc, message: err.message, data: err.toBody() };
  }
  onError?.(err);
  return { code: ERROR_CODES.INTERNAL.jsonRpc, message: 'an unexpected error; it has been logged' };
}

/** The gate's refusal of an entry request, with its decision for the client (never the result). */
function entryDenied(
  decision: Exclude<GateDecision, { kind: 'allow' }>,
): ToolgateError<'ENTRY_DENIED' | 'RESOURCE_NOT_FOUND' | 'PROMPT_NOT_FOUND'> {
  // The gate's `resolve` step found no offered entry: the protocol's own not-found error.
  if (decision.kind === 'deny' && decision.code === 'RESOURCE_NOT_FOUND') {
    return new ToolgateError(decision.code, decision.message, decision.details as { uri: string });
  }
  if (decision.kind === 'deny' && decision.code === 'PROMPT_NOT_FOUND') {
    return new ToolgateError(decision.code, decision.message, decision.details as { name: string });
  }
  if (decision.kind === 'pending_approval') {
    return new ToolgateError('ENTRY_DENIED', decision.message, {
      code: 'APPROVAL_REQUIRED',
      rule: 'approval.required',
      call_id: decision.callId,
      approval_id: decision.approvalId,
    });
  }
  return new ToolgateError(
    'ENTRY_DENIED',
    `${decision.code} (rule ${decision.rule}): ${decision.message}`,
    {
      code: decision.code,
      rule: decision.rule,
      call_id: decision.callId,
      ...(decision.details !== undefined ? { details: decision.details } : {}),
    },
  );
}

/**
 * An allowed entry call's answer (the upstream's structured value) with its trust label as a
 * result's `_meta` carries it (docs/policies.md, "Results are labelled and scanned"): a
 * resource's contents and a prompt's messages are outside content like a tool's result. A denial
 * or a pending approval throws ENTRY_DENIED with the decision.
 */
export function entryAnswer(decision: GateDecision): {
  readonly value: Record<string, unknown>;
  readonly meta: Record<string, unknown>;
} {
  if (decision.kind !== 'allow') throw entryDenied(decision);
  const structured = upstreamResult(decision)?.structuredContent;
  if (!structured) {
    throw new ToolgateError('ENTRY_DENIED', 'the upstream gave no answer', {
      code: 'EXECUTION_FAILED',
      rule: 'provider.error',
      call_id: decision.callId,
    });
  }
  return { value: structured, meta: decision.trust ? { [TRUST_META_KEY]: decision.trust } : {} };
}
