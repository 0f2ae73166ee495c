/**
 * @module One bounded run of the host's python3 for the Python guard: a fixed script (never the
 * code argument: that only ever arrives on stdin, as text to parse), `-I -S -B` so no
 * environment, user site or `site` applies, a hard timeout, an output cap, and one JSON answer.
 */
import { spawn } from 'node:child_process';
import { PARSE_TIMEOUT_MS } from './code-verdict.js';

export interface PythonGuardOptions {
  /** The interpreter whose `ast` parses; `python3` on PATH by default. */
  readonly python?: string;
  readonly timeoutMs?: number;
}

/** Longest JSON answer a script may give before it is stopped (a tree of MAX_CODE_CHARS fits). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export type ChildAnswer =
  | { readonly json: unknown }
  | { readonly failed: 'timeout' | 'unavailable' | 'answer' };

/** Runs `script` with `input` on stdin; its stdout parsed as JSON. Never rejects. */
export function runPython(
  script: string,
  input: string,
  options: PythonGuardOptions,
): Promise<ChildAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: ChildAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(answer);
    };
    const child = spawn(options.python ?? 'python3', ['-I', '-S', '-B', '-c', script], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONIOENCODING: 'utf-8' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const timer = setTimeout(
      () => done({ failed: 'timeout' }),
      options.timeoutMs ?? PARSE_TIMEOUT_MS,
    );
    const chunks: Buffer[] = [];
    let bytes = 0;
    child.on('error', () => done({ failed: 'unavailable' }));
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_ANSWER_BYTES) done({ failed: 'answer' });
      else chunks.push(chunk);
    });
    child.on('close', (status) => {
      if (status !== 0) return done({ failed: 'answer' });
      try {
        return done({ json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        // Falls through: an answer that is not the script's is no answer.
      }
      done({ failed: 'answer' });
    });
    child.stdin.on('error', () => done({ failed: 'answer' }));
    child.stdin.end(input, 'utf8');
  });
}
