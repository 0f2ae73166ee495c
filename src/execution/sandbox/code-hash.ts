/**
 * @module A command tool's `code_hash` (C9): the SHA-256 of the files its argv names by
 * absolute path (its script, its binary when named by path), checked before every run so that a
 * changed file is never run. Re-hashed whenever a file's identity or timestamps change (device,
 * inode, size, mtime, ctime: ctime moves on any write and cannot be set back by a process), and
 * otherwise answered from memory, so a large binary is not read on every call.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

/** The argv entries that count: absolute paths naming a regular file, in argv order, once each. */
export function codeFiles(argv: readonly string[]): string[] {
  const files: string[] = [];
  for (const arg of argv) {
    if (!arg.startsWith('/') || files.includes(arg)) continue;
    try {
      if (statSync(arg).isFile()) files.push(arg);
    } catch {
      // Not a file here: not part of the hash (a missing script fails its run anyway).
    }
  }
  return files;
}

const fileHashes = new Map<string, { readonly stamp: string; readonly hash: string }>();
const MAX_CACHED = 1024;

function fileHash(path: string): string {
  const st = statSync(path, { bigint: true });
  const stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  const cached = fileHashes.get(path);
  if (cached && cached.stamp === stamp) return cached.hash;
  const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
  if (fileHashes.size >= MAX_CACHED) fileHashes.clear();
  fileHashes.set(path, { stamp, hash });
  return hash;
}

/**
 * `sha256:` + hex SHA-256 over, for each code file in argv order, the line
 * `<path> sha256:<hex of its bytes>\n`. `toolgate tools hash -- <argv…>` prints it.
 */
export function commandCodeHash(argv: readonly string[]): string {
  const text = codeFiles(argv)
    .map((path) => `${path} sha256:${fileHash(path)}\n`)
    .join('');
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}
