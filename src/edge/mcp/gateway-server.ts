/**
 * @module One MCP server per agent session (C15, docs/architecture.md §6): tools/list is exactly the gate
 * session's permitted set, tools/call goes through the gate. A denial or a pending approval is a
 * tool result with `isError` and the code, rule and message — never a protocol crash, never a
 * silent drop; a pending approval is first held open for its decision (approval-hold.ts), so a
 * stock client gets the result in the same call. Nothing here decides anything: the gate does.
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { AgentApi, GateDecision } from '../../api/index.js';
import { type AgentPrincipal, isToolgateError } from '../../core/index.js';
import {
  type ApprovalHold,
  DEFAULT_APPROVAL_WAIT_MS,
  heldApproval,
  holdForApproval,
  holdOf,
} from './approval-hold.js';
import { getPrompt, listEntries, readResource } from './entry-requests.js';
import { type McpOrigin, type ToolCall, toolCall } from './gate-call.js';
import { failure, failureFor, rpcErrorOf, toolResult } from './result-shape.js';
import { SESSION_SCHEMA_VALIDATOR } from './shared-schema-validator.js';

/**
 * Who the MCP session is: the authenticated principal (agent, credential, token user) and its
 * gate session. Every request on the MCP session must come from this same principal.
 */
export interface McpBinding {
  readonly principal: AgentPrincipal;
  readonly sessionId: string;
}

/** The binding of an authenticated principal to a freshly opened gate session. */
export function bindingOf(principal: AgentPrincipal, sessionId: string): McpBinding {
  return { principal, sessionId };
}

/**
 * How a request's own principal reaches its handler: the SDK's per-request `authInfo` (the HTTP
 * front sets it on each request it hands the session). An OAuth token's scopes are the request's,
 * never the ones the session was opened with (docs/agents-and-identity.md, "Scopes narrow").
 */
export function requestAuth(principal: AgentPrincipal): AuthInfo {
  const scopes = [...(principal.oauth?.scopes ?? [])];
  return { token: '', clientId: principal.agentId, scopes, extra: { principal } };
}

/**
 * The binding as one request on the MCP session is made: its own principal when the front
 * handed one (the front checked it is the binding's agent, credential and user), else the
 * binding's (stdio: the one principal of the connection).
 */
function requestBinding(binding: McpBinding, extra: { authInfo?: AuthInfo }): McpBinding {
  const principal = extra.authInfo?.extra?.principal as AgentPrincipal | undefined;
  return principal && sameBinding(binding, principal)
    ? { principal, sessionId: binding.sessionId }
    : binding;
}

/** Same agent, credential and token user: exact comparison of every part. */
export function sameBinding(a: McpBinding, b: AgentPrincipal): boolean {
  return (
    a.principal.agentId === b.agentId &&
    a.principal.credential === b.credential &&
    a.principal.user?.id === b.user?.id
  );
}

export interface GatewayServerOptions {
  readonly version: string;
  /** Called when a call was refused for a reason the agent cannot fix by retrying (logging). */
  readonly onError?: (err: unknown) => void;
  /**
   * Called once a cancelled call has ended. The SDK sends no response for it; over Streamable
   * HTTP the request's stream would stay open until the session ends, so the front closes it.
   */
  readonly onCancelled?: (requestId: string | number) => void;
  /**
   * Runs a wait for the person at the client (a pending approval's prompt) as a standing wait:
   * without the request's slot, counted and bounded for the principal; `wait` must end when its
   * signal aborts. `{ ok: false }` when the wait was refused, or the slot could not be had again
   * after it (the call is then answered as still pending). Absent: the wait runs as is.
   */
  readonly standBy?: <T>(
    requestId: string | number,
    wait: (signal: AbortSignal) => Promise<T>,
  ) => Promise<{ readonly ok: true; readonly value: T } | { readonly ok: false }>;
  /**
   * How long one call that waits for approval is held open for its decision (approval-hold.ts,
   * as a standing wait through `standBy`); 0 answers at once. Default DEFAULT_APPROVAL_WAIT_MS.
   */
  readonly approvalWaitMs?: number;
}

/** How long a pending-approval prompt waits for the person at the client. */
const ELICIT_TIMEOUT_MS = 120_000;

/**
 * Builds the SDK server for one binding. `tools/list` reads the session's set each time, so a
 * refreshed set (after list_changed) is what the client sees next.
 */
export function createGatewayServer(
  agent: AgentApi,
  binding: McpBinding,
  options: GatewayServerOptions,
): Server {
  const server = new Server(
    { name: 'toolgate', version: options.version },
    {
      // Resources and prompts are always advertised (lists empty when nothing is granted): a grant
      // or classification later shows up after list_changed, as a tool's does.
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
      },
      jsonSchemaValidator: SESSION_SCHEMA_VALIDATOR,
      instructions:
        'toolgate governs these tools. A result with isError and a code (for example ' +
        'APPROVAL_REQUIRED or POLICY_DENIED) is a decision, not a fault: report it to the user. ' +
        'After an approval, retry the same call with exactly the same arguments.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const { principal } = requestBinding(binding, extra);
    const tools = (await agent.sessions
      .exportTools(binding.sessionId, principal, 'mcp')
      .catch((err: unknown) => {
        // A credential that no longer holds (stdio proves it on every request) keeps its code.
        if (isToolgateError(err) && err.code === 'UNAUTHENTICATED') {
          throw entryError(err, options.onError);
        }
        throw err;
      })) as Tool[];
    return { tools };
  });
  registerEntryHandlers(server, agent, binding, options);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const who = requestBinding(binding, extra);
    const call = toolCall(agent, who, request.params, {
      signal: extra.signal,
      notify: extra.sendNotification,
      origin: legacyOrigin(extra),
    });
    const standBy = options.standBy;
    const hold: ApprovalHold = holdOf(
      {
        waitMs: options.approvalWaitMs ?? DEFAULT_APPROVAL_WAIT_MS,
        standBy: standBy ? (wait) => standBy(extra.requestId, wait) : undefined,
      },
      request.params._meta,
    );
    try {
      let decision = await call.invoke();
      if (decision.kind === 'pending_approval' && server.getClientCapabilities()?.elicitation) {
        decision = await askPerson(decision, call, extra, options);
      }
      // Held until a person decides, within the bound: the client gets the result in this call.
      if (decision.kind === 'pending_approval') {
        const pending = decision;
        const io = { signal: extra.signal, call };
        if (await holdForApproval(agent, who, pending, hold, io)) {
          decision = await call.invoke(heldApproval(pending));
        }
      }
      await call.flush();
      if (extra.signal.aborted) options.onCancelled?.(extra.requestId);
      return toolResult(decision);
    } catch (err) {
      if (isToolgateError(err) && err.code === 'SESSION_NOT_FOUND') {
        return failure('SESSION_NOT_FOUND', 'this session has ended; reconnect to start a new one');
      }
      return failureFor(err, options.onError);
    }
  });
  return server;
}

type Pending = Extract<GateDecision, { kind: 'pending_approval' }>;
type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Shows the person at a client that declares elicitation what waits, and lets them retry once it
 * is approved. The retry is the same call with the same arguments: the gate decides again.
 */
async function askPerson(
  pending: Pending,
  call: ToolCall,
  extra: CallExtra,
  options: GatewayServerOptions,
): Promise<GateDecision> {
  const ask = (signal?: AbortSignal) =>
    extra
      .sendRequest(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message:
              `toolgate: this call needs approval (approval id ${pending.approvalId}): ` +
              `${JSON.stringify(pending.rendered)}. Accept once an administrator has ` +
              'approved it to run it now; decline to leave it waiting.',
            requestedSchema: { type: 'object', properties: {} },
          },
        },
        ElicitResultSchema,
        { timeout: ELICIT_TIMEOUT_MS, ...(signal ? { signal } : {}) },
      )
      .catch(() => null);
  // The person may take minutes: the wait holds no request slot (standBy), and a wait that is
  // refused, or a slot not had again after it, leaves the call pending, as declined.
  const waited = options.standBy
    ? await options.standBy(extra.requestId, ask)
    : { ok: true as const, value: await ask() };
  const answer = waited.ok ? waited.value : null;
  return answer?.action === 'accept' ? call.invoke() : pending;
}

/** A refusal of an entry request as a JSON-RPC error of the catalogue; unknown errors logged. */
function entryError(err: unknown, onError: ((err: unknown) => void) | undefined): McpError {
  const e = rpcErrorOf(err, onError);
  return new McpError(e.code, e.message, e.data);
}

/** resources/*, prompts/* of one session: governed entries only, reads through the gate. */
function registerEntryHandlers(
  server: Server,
  agent: AgentApi,
  binding: McpBinding,
  options: GatewayServerOptions,
): void {
  const lists = (extra: { authInfo?: AuthInfo }) =>
    listEntries(agent, binding.sessionId, requestBinding(binding, extra).principal).catch(
      (err: unknown) => {
        throw entryError(err, options.onError);
      },
    );
  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => ({
    resources: [...(await lists(extra)).resources],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_request, extra) => ({
    resourceTemplates: [...(await lists(extra)).resourceTemplates],
  }));
  server.setRequestHandler(ListPromptsRequestSchema, async (_request, extra) => ({
    prompts: (await lists(extra)).prompts.map((p) => ({ ...p, arguments: [...p.arguments] })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    try {
      const read = await readResource(agent, requestBinding(binding, extra), request.params.uri, {
        signal: extra.signal,
      });
      return read as ReadResourceResult;
    } catch (err) {
      throw entryError(err, options.onError);
    }
  });
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    try {
      const ctx = requestBinding(binding, extra);
      const got = await getPrompt(agent, ctx, request.params.name, request.params.arguments, {
        signal: extra.signal,
      });
      return got as GetPromptResult;
    } catch (err) {
      throw entryError(err, options.onError);
    }
  });
}

/** A 2025-era request's origin for its trace: over HTTP its `traceparent` header, else stdio. */
function legacyOrigin(extra: {
  readonly requestId: string | number;
  readonly requestInfo?: { readonly headers?: Record<string, string | string[] | undefined> };
}): McpOrigin {
  const headers = extra.requestInfo?.headers;
  const header = headers?.traceparent;
  return {
    transport: headers ? 'tcp' : 'pipe',
    traceparent: typeof header === 'string' ? header : undefined,
    jsonrpcId: extra.requestId,
  };
}
