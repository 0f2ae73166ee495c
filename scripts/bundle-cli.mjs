/**
 * @module Bundles the `toolgate` command (`npm run build`'s last step): tsc's dist/edge/cli/main.js
 * and everything it imports from dist/ become ES modules at the same path (main.js and the chunks
 * beside it that only some commands load), with the pure JavaScript packages of INLINE inside.
 * A command then starts from a few files instead of about 1,200 (tsc's modules and the packages'
 * own): `tools list` in about a third of the time and CPU, for every command an operator or a
 * test runs. Every other package stays an import of node_modules: native code (better-sqlite3),
 * WebAssembly found beside its module (cedar-wasm), worker files and assets (fastify, pino,
 * swagger-ui) and anything not listed. The library (dist/index.js) is not bundled. The bundle
 * sits where main.js was, three folders below the package, its chunks beside it (chunk-*.js), so
 * the paths its modules compute from import.meta.url (package.json, demo/) stay true.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { build } from 'esbuild';

/** Packages bundled into the command: pure JavaScript, nothing read from beside their modules. */
const INLINE = new Set([
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/core',
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/server',
  '@opentelemetry/api',
  'acorn',
  'ajv',
  'ajv-formats',
  'canonicalize',
  'commander',
  'fast-uri',
  'ipaddr.js',
  'jose',
  'kysely',
  'minisearch',
  'prom-client',
  're2js',
  'semver',
  'yaml',
  'zod',
  'zod-to-json-schema',
]);

/** The package a bare import names (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const entry = 'dist/edge/cli/main.js';
// `audit verify`'s worker threads load this module by a URL beside the code that starts them
// (records/store/sqlite/parallel-ranges.ts), which in the bundle is beside main.js.
const verifyWorker = 'dist/records/store/sqlite/verify-worker.js';
// Likewise the scan workers of a bulk apply (domain/catalog/scan-pool.ts).
const scanWorker = 'dist/domain/catalog/scan-worker.js';
const BANNER =
  "import { createRequire as __toolgateRequire } from 'node:module'; const require = __toolgateRequire(import.meta.url);";
// A second bundling of a bundle would not load (its banner twice): the build is `rm -rf dist`, tsc, this.
if (readFileSync(entry, 'utf8').includes(BANNER)) {
  console.error(`${entry} is already a bundle: run npm run build, which compiles it afresh first`);
  process.exit(1);
}
await build({
  entryPoints: [
    { in: entry, out: 'main' },
    { in: verifyWorker, out: 'verify-worker' },
    { in: scanWorker, out: 'scan-worker' },
  ],
  // Split: what a command imports only when it runs (serve's REST server with fastify, mcp's
  // stdio server) is a chunk of its own, so `tools list` never loads fastify (about 0.2 s).
  outdir: dirname(entry),
  splitting: true,
  chunkNames: 'chunk-[hash]',
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  logLevel: 'warning',
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: { js: BANNER },
  plugins: [
    {
      name: 'node-modules-outside-inline',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:')) return { external: true };
          return INLINE.has(packageOf(args.path)) ? undefined : { external: true };
        });
      },
    },
  ],
});
// tsc's source map of main.js describes the file the bundle replaced.
rmSync(`${entry}.map`, { force: true });
