/**
 * @module What a child Node process really keeps in memory, for leak tests. Resident memory under
 * load mostly measures when V8 last ran a full collection: with collection cheap, V8 lets garbage
 * grow to a few times the live heap before it collects (measured on the MCP load test: live heap
 * flat at ~68 MB while the old generation swung between 70 and 290 MB). So a leak test asks the
 * child itself, over its inspector (started with `--inspect=127.0.0.1:0`, loopback, a port from
 * the kernel), to collect garbage and then report its memory — the same figures at two moments
 * differ only by what was really kept.
 */
import type { ChildProcess } from 'node:child_process';
import { WebSocket } from 'undici';

export interface SettledMemory {
  /** Bytes of live JavaScript objects after a full collection. */
  readonly heapUsed: number;
  /** Bytes held outside the JavaScript heap by its objects (Buffers, native handles). */
  readonly external: number;
  /** Resident set size after that collection, in bytes. */
  readonly rss: number;
}

/** The inspector's WebSocket URL that a child started with `--inspect=127.0.0.1:0` prints. */
export function inspectorUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no inspector URL: ${err}`)), 120_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(err);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

export class HeapProbe {
  readonly #ws: WebSocket;
  #next = 1;
  readonly #waiting = new Map<number, (result: unknown) => void>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.addEventListener('message', (event) => {
      const msg = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (msg.id === undefined) return;
      this.#waiting.get(msg.id)?.(msg.result);
      this.#waiting.delete(msg.id);
    });
  }

  static async connect(url: string): Promise<HeapProbe> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`cannot reach inspector ${url}`)), {
        once: true,
      });
    });
    return new HeapProbe(ws);
  }

  #send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#next++;
    const answered = new Promise<unknown>((resolve) => this.#waiting.set(id, resolve));
    this.#ws.send(JSON.stringify({ id, method, params }));
    return answered;
  }

  /** Collects garbage in the child (twice: weak references and finalisers settle) and reads its memory. */
  async settle(): Promise<SettledMemory> {
    await this.#send('HeapProfiler.collectGarbage');
    await this.#send('HeapProfiler.collectGarbage');
    const answer = (await this.#send('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result?: { value?: string } };
    const usage = JSON.parse(answer.result?.value ?? '{}') as Partial<SettledMemory>;
    if (
      typeof usage.heapUsed !== 'number' ||
      typeof usage.external !== 'number' ||
      typeof usage.rss !== 'number'
    ) {
      throw new Error(`the inspector gave no memory figures: ${JSON.stringify(answer)}`);
    }
    return { heapUsed: usage.heapUsed, external: usage.external, rss: usage.rss };
  }

  close(): void {
    this.#ws.close();
  }
}
