#!/usr/bin/env node
/**
 * @module The `toolgate` command's entry: checks that the runtime is one toolgate supports (Node.js
 * 24 or later; its SQLite driver crashes older ones), turns on Node's compile cache (a command
 * starts from code V8 compiled before, in the operating system's temporary folder or
 * NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off), then runs the command (run.ts).
 */
import nodeModule from 'node:module';

/** The oldest Node.js major version toolgate runs on (package.json `engines`). */
const OLDEST_NODE = 24;

const major = Number(process.versions.node.split('.')[0]);
if (!(major >= OLDEST_NODE)) {
  process.stderr.write(
    `toolgate: needs Node.js ${OLDEST_NODE} or later, and this is ${process.version}. In a checkout, ` +
      '`npm ci` brings Node.js 24 into node_modules/.bin: run `npx toolgate …` or `npm start`.\n',
  );
  process.exit(1);
}
nodeModule.enableCompileCache?.();
await import('./run.js');
