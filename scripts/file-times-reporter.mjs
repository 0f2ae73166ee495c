/**
 * @module A node:test reporter that keeps, per test file, the sum of its top-level tests' and
 * suites' durations (hooks included) in the JSON file TOOLGATE_FILE_TIMES names, written as each
 * top-level test ends (a run with --test-force-exit never reaches a reporter's last words).
 * scripts/run-tests.mjs adds it beside the spec reporter and prints the slowest files, so a slow
 * file is seen by name in every run.
 */
import { writeFileSync } from 'node:fs';

export default async function* fileTimes(source) {
  const out = process.env.TOOLGATE_FILE_TIMES;
  const byFile = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (nesting !== 0 || !file || !out) continue;
    byFile[file] = (byFile[file] ?? 0) + (details?.duration_ms ?? 0);
    writeFileSync(out, JSON.stringify(byFile));
  }
  yield '';
}
