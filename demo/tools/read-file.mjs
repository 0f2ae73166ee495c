#!/usr/bin/env node
// Demo tool `read_file`: reads {"path": "<absolute path>"} as JSON on stdin and prints
// {"content": "...", "bytes": n}. It runs in toolgate's sandbox, where the only files it can see
// are its own and the workspace (read-only); the gate has already resolved the caller's relative
// path to a real path inside the workspace before this starts.
import { readFileSync } from 'node:fs';

const MAX_BYTES = 256 * 1024;
const input = JSON.parse(readFileSync(0, 'utf8'));
const data = readFileSync(input.path);
const content = data.subarray(0, MAX_BYTES).toString('utf8');
process.stdout.write(JSON.stringify({ content, bytes: data.length }));
