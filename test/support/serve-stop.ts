/**
 * @module What the tests of `serve`'s stop share (docs/operations.md "Stopping"): a command tool
 * that sleeps, the audit rows a stopped server left, and a raw HTTP/1.1 connection that can send
 * requests back to back (pipelined) and read each whole response with the time it came.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT } from './cli.js';

const SLOW_TOOL = join(ROOT, 'test', 'fixtures', 'sandbox', 'slow-tool.sh');

/** A command tool in the process sandbox that sleeps `seconds` (its argv), then answers. */
export function slowTool(id: string, seconds: number, capability = 'slow:run') {
  return {
    apiVersion: 'toolgate/v1',
    kind: 'Tool',
    spec: {
      id,
      version: '1.0.0',
      name: id,
      description: `Wait ${seconds} seconds, then echo the note it was given.`,
      tags: ['test'],
      owner: 'platform-team',
      action_class: 'read',
      data_access: 'none',
      egress: { mode: 'none' },
      access_tier: 'public',
      required_capabilities: [capability],
      runtime: { kind: 'command', argv: ['/bin/sh', SLOW_TOOL, String(seconds)] },
      sandbox: { isolation: 'process', limits: { wall_time_ms: 30_000 } },
      provenance: 'internal',
      input_schema: {
        type: 'object',
        additionalProperties: false,
        required: ['note'],
        properties: { note: { type: 'string', maxLength: 40 } },
      },
      output_schema: {
        type: 'object',
        required: ['slept'],
        properties: { slept: { type: 'integer' } },
      },
    },
  };
}

export interface AuditRow {
  readonly call_id: string;
  readonly kind: string;
  readonly outcome: string | null;
  readonly rule: string | null;
  readonly tool_id: string | null;
}

/** The audit log's rows of the SQLite database `tg.db` in `dir`, in order. */
export function auditRows(dir: string): AuditRow[] {
  const db = new Database(join(dir, 'tg.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare('select call_id, kind, outcome, rule, tool_id from audit_log order by seq')
      .all() as AuditRow[];
  } finally {
    db.close();
  }
}

/** How many pre records calls of `tool` (every tool when null) have in `dir`'s database. */
export function preCount(dir: string, tool: string | null): number {
  const db = new Database(join(dir, 'tg.db'), { readonly: true, fileMustExist: true });
  try {
    const row = (
      tool === null
        ? db.prepare("select count(*) as n from audit_log where kind = 'call.pre'").get()
        : db
            .prepare("select count(*) as n from audit_log where kind = 'call.pre' and tool_id = ?")
            .get(tool)
    ) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

/** Waits (bounded) until calls of `tool` (any tool when null) have `atLeast` pre records. */
export async function preRecorded(dir: string, tool: string | null, atLeast: number) {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (preCount(dir, tool) >= atLeast) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${preCount(dir, tool)} pre records of ${tool ?? 'any tool'}, not ${atLeast}`);
}

/** One whole response as it came on a raw connection, and when its last byte came. */
export interface RawResponse {
  readonly status: number;
  /** The status line and the headers, as sent. */
  readonly head: string;
  /** Header names in lower case; a repeated header's values joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly at: number;
}

/** The `Connection` header's tokens of `res`, lower case. */
export function connectionTokens(res: RawResponse): string[] {
  return (res.headers.connection ?? '').split(',').map((t) => t.trim().toLowerCase());
}

/** A whole response at the start of `buf` and the bytes after it, or null while it is not whole. */
function parseResponse(buf: Buffer): { res: Omit<RawResponse, 'at'>; rest: Buffer } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.subarray(0, end).toString('latin1');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0);
  let at = end + 4;
  if ((headers['transfer-encoding'] ?? '').toLowerCase() === 'chunked') {
    const chunks: Buffer[] = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = Number.parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (buf.length < lineEnd + 2 + size + 2) return null;
      chunks.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    const body = Buffer.concat(chunks).toString('utf8');
    return { res: { status, head, headers, body }, rest: buf.subarray(at) };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buf.length < at + length) return null;
  const body = buf.subarray(at, at + length).toString('utf8');
  return { res: { status, head, headers, body }, rest: buf.subarray(at + length) };
}

/**
 * A raw connection to `base`: `send` writes bytes as given (several requests in one write are
 * pipelined), `response()` resolves with the next whole response (Content-Length or chunked
 * body), or rejects when the connection closes first; `closed` resolves when the server closed it
 * (and when), `pending()` says how many bytes came that are not a whole response.
 */
export async function rawConnection(base: string) {
  const url = new URL(base);
  const socket: Socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  let buffered: Buffer = Buffer.alloc(0);
  const ready: RawResponse[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (let parsed = parseResponse(buffered); parsed; parsed = parseResponse(buffered)) {
      ready.push({ ...parsed.res, at: Date.now() });
      buffered = parsed.rest;
    }
    wake?.();
  });
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      ended = true;
      wake?.();
      resolve(Date.now());
    }),
  );
  const response = async (): Promise<RawResponse> => {
    for (;;) {
      const next = ready.shift();
      if (next) return next;
      if (ended) throw new Error(`the connection closed first (${buffered.length} bytes unread)`);
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
  return {
    socket,
    send: (text: string) => socket.write(text),
    response,
    closed,
    pending: () => buffered.length,
  };
}

/** An HTTP/1.1 POST of a JSON body as sent on a raw connection (several in a row are pipelined). */
export function postText(
  path: string,
  token: string,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): string {
  const text = JSON.stringify(body);
  const lines = [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${token}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(text)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${text}`;
}
