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
  readonly #queue: JSONRPCMessage[] = [];
  #delivering = false;
  #finishPending = false;
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
        this.#queue.push(message);
      }
      if (this.#queue.length > 0 && !this.#delivering) void this.#deliver();
    });
    this.#in.on('error', (err: Error) => this.onerror?.(err));
    this.#in.on('close', () => this.#finish());
  }

  /**
   * Hands messages on in the order they came. The SDK runs a notification's handler a microtask
   * later but settles a response at once, so a progress report read in the same chunk as its
   * request's response would find the request gone and be lost: after each notification the
   * next message waits for the event loop to turn.
   */
  async #deliver(): Promise<void> {
    this.#delivering = true;
    try {
      for (let message = this.#queue.shift(); message; message = this.#queue.shift()) {
        this.onmessage?.(message);
        if ('method' in message && !('id' in message) && this.#queue.length > 0) {
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      this.#delivering = false;
      // The stream ended while messages were still being handed on: close after the last one.
      if (this.#finishPending) this.#finish();
    }
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
    if (this.#delivering) {
      this.#finishPending = true;
      return;
    }
    this.#closed = true;
    this.#buffer.clear();
    this.#queue.length = 0;
    this.onclose?.();
  }
}
