/**
 * Writes biome.json's wing rules (one override per wing of src/) from the wing table in
 * test/support/wings.ts and the exceptions listed in test/core/house-exceptions.json. The house
 * rules test fails when biome.json and the table disagree; run this after changing either:
 *   node --import tsx scripts/wing-lint.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wingOverrides } from '../test/support/wings.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const path = join(ROOT, 'biome.json');
const config = JSON.parse(readFileSync(path, 'utf8')) as { overrides?: { includes: string[] }[] };
const exceptions = JSON.parse(
  readFileSync(join(ROOT, 'test', 'core', 'house-exceptions.json'), 'utf8'),
) as { imports: string[] };
const isWingRule = (o: { includes: string[] }) => /^src\/[^/]+\/\*\*$/.test(o.includes[0] ?? '');
config.overrides = [
  ...(config.overrides ?? []).filter((o) => !isWingRule(o)),
  ...wingOverrides(exceptions.imports),
];
writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
console.log(`biome.json: ${config.overrides.length} overrides`);
