/**
 * @module resources/*, prompts/* on the 2026-07-28 server (C15, docs/architecture.md §6): the
 * run's governed entries, sorted, each list result carrying the run handle in `_meta` (the
 * server's cache hints give lists `cacheScope: private` and a `ttlMs`); a read or get is a gate
 * call of the entry in the run (entry-requests.ts). A refusal is a protocol error with the
 * catalogue's number and body.
 */
import {
  type GetPromptResult,
  ProtocolError,
  type ReadResourceResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { AgentApi } from '../../api/index.js';
import { isToolgateError } from '../../core/index.js';
import { getPrompt, listEntries, readResource } from './entry-requests.js';
import type { RequestCaller } from './modern-caller.js';
import { rpcErrorOf } from './result-shape.js';
import { RUN_META_KEY } from './run-meta.js';

export interface ModernEntryDeps {
  readonly agent: AgentApi;
  /** Runs a handler for the request's caller, the server held for it (modern-server.ts). */
  readonly held: <T>(ctx: ServerContext, work: (caller: RequestCaller) => Promise<T>) => Promise<T>;
  readonly onError?: (err: unknown) => void;
}

function handleOf(meta: unknown): string | undefined {
  const value = (meta as Record<string, unknown> | undefined)?.[RUN_META_KEY];
  return typeof value === 'string' ? value : undefined;
}

export function registerModernEntryHandlers(server: Server, deps: ModernEntryDeps): void {
  const { agent, held } = deps;
  const fail = async (caller: RequestCaller, handle: string, err: unknown): Promise<never> => {
    if (isToolgateError(err) && err.code === 'SESSION_NOT_FOUND') {
      return caller.refused(handle, err);
    }
    const e = rpcErrorOf(err, deps.onError);
    throw new ProtocolError(e.code, e.message, e.data);
  };
  const lists = async (caller: RequestCaller, meta: unknown) => {
    const { runs, who } = caller;
    const run = await runs.resolve(handleOf(meta));
    // A run follows grant and catalog changes at the client's next list, as for tools/list.
    await agent.sessions
      .refresh(run.handle, who)
      .catch((err: unknown) => fail(caller, run.handle, err));
    const entries = await listEntries(agent, run.handle, who).catch((err: unknown) =>
      fail(caller, run.handle, err),
    );
    return { entries, _meta: { [RUN_META_KEY]: run.handle } };
  };

  server.setRequestHandler('resources/list', (request, ctx: ServerContext) =>
    held(ctx, async (caller) => {
      const { entries, _meta } = await lists(caller, request.params?._meta);
      return { resources: [...entries.resources], _meta };
    }),
  );
  server.setRequestHandler('resources/templates/list', (request, ctx: ServerContext) =>
    held(ctx, async (caller) => {
      const { entries, _meta } = await lists(caller, request.params?._meta);
      return { resourceTemplates: [...entries.resourceTemplates], _meta };
    }),
  );
  server.setRequestHandler('prompts/list', (request, ctx: ServerContext) =>
    held(ctx, async (caller) => {
      const { entries, _meta } = await lists(caller, request.params?._meta);
      return {
        prompts: entries.prompts.map((p) => ({ ...p, arguments: [...p.arguments] })),
        _meta,
      };
    }),
  );
  server.setRequestHandler('resources/read', (request, ctx: ServerContext) =>
    held(ctx, async (caller) => {
      const run = await caller.runs.resolve(handleOf(request.params._meta));
      try {
        const read = await readResource(
          agent,
          { principal: caller.who, sessionId: run.handle },
          request.params.uri,
          { signal: ctx.mcpReq.signal },
        );
        // The upstream's contents, passed on as it gave them once the gate allowed the read.
        return {
          ...read,
          _meta: { ...read._meta, [RUN_META_KEY]: run.handle },
        } as ReadResourceResult;
      } catch (err) {
        return fail(caller, run.handle, err);
      }
    }),
  );
  server.setRequestHandler('prompts/get', (request, ctx: ServerContext) =>
    held(ctx, async (caller) => {
      const run = await caller.runs.resolve(handleOf(request.params._meta));
      try {
        const got = await getPrompt(
          agent,
          { principal: caller.who, sessionId: run.handle },
          request.params.name,
          request.params.arguments,
          { signal: ctx.mcpReq.signal },
        );
        return { ...got, _meta: { ...got._meta, [RUN_META_KEY]: run.handle } } as GetPromptResult;
      } catch (err) {
        return fail(caller, run.handle, err);
      }
    }),
  );
}
