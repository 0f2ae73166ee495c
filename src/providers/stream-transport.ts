/**
 * @module An MCP client transport over a sandboxed process's stdio pipes (newline-delimited
 * JSON-RPC, as the SDK's stdio transport speaks it). The SDK's own stdio transport spawns its
 * child itself, outside any sandbox; this one is handed the pipes of a process the sandbox
 * started.
 */
import type { Readable, Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class StreamClientTransport implements Transport {
  readonly #in: Readable;
  readonly #out: Writable;
  readonly #buffer = new ReadBuffer();
  #closed = false;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** `stdout` of the process is what we read; `stdin` is what we write. */
  constructor(stdout: Readable, stdin: Writable) {
    this.#in = stdout;
    this.#out = stdin;
  }

  async start(): Promise<void> {
    this.#in.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.#buffer.readMessage();
        } catch (err) {
          // A line that is not JSON-RPC: reported, and the stream goes on.
          this.onerror?.(err instanceof Error ? err : new Error(String(err)));
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.#in.on('error', (err: Error) => this.onerror?.(err));
    this.#in.on('close', () => this.#finish());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error('the upstream process has ended');
    await new Promise<void>((resolve, reject) => {
      this.#out.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.#out.end();
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer.clear();
    this.onclose?.();
  }
}
