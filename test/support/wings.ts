/**
 * @module The wings of src/ and what each may import (docs/architecture.md §2): the one table the
 * house rules (test/core/house-rules.test.ts) and the lint rules in biome.json are made from.
 * `node --import tsx scripts/wing-lint.ts` writes biome.json's wing rules from it.
 */

/**
 * The wings, from the edge down, and what each may import besides itself and core/. A front sees
 * only the door (api/); the gate runs the domain and hands calls to execution; records keep what
 * happened. The message says what to import instead.
 */
export const WINGS: Record<string, { mayImport: readonly string[]; instead: string }> = {
  core: { mayImport: [], instead: 'core/ is pure: pass what it needs in as values' },
  client: {
    mayImport: [],
    instead: 'the client SDK ships alone: it imports only core/ (its wire types live in client/)',
  },
  records: {
    mayImport: [],
    instead:
      'records/ (store, audit chain, audit log) sit below the domain: a domain type it needs moves to core/, a callback becomes a port records/ owns',
  },
  domain: {
    mayImport: ['records'],
    instead:
      'the domain uses records/ and core/ only: a service it needs from above becomes a port the domain owns, filled in by host/',
  },
  execution: {
    mayImport: ['domain', 'records'],
    instead:
      'execution/ runs what the gate hands it: read definitions from domain/, never the gate',
  },
  gate: {
    mayImport: ['execution', 'domain', 'records'],
    instead:
      'the gate decides with the domain and runs through execution/: what it needs from operations/ becomes a port the gate owns',
  },
  operations: {
    mayImport: ['gate', 'execution', 'domain', 'records'],
    instead: 'operations/ watch and administer the wings below them, never api/, edge/ or host/',
  },
  api: {
    mayImport: ['operations', 'gate', 'execution', 'domain', 'records'],
    instead: 'api/ is the door: it never imports a front (edge/) or the composition (host/)',
  },
  edge: {
    mayImport: ['api'],
    instead:
      'fronts see only api/ (the agent and admin APIs, the principal, the wire types) and core/: add what a front needs to api/',
  },
  host: {
    mayImport: ['edge', 'api', 'operations', 'gate', 'execution', 'domain', 'records', 'client'],
    instead: 'host/ composes every wing',
  },
  'index.ts': {
    mayImport: ['host', 'edge', 'api', 'operations', 'gate', 'execution', 'domain', 'records'],
    instead: 'the library entry re-exports the public API',
  },
};

/** Wings of several rooms; every other top-level entry is one room. */
export const MULTI_ROOM = new Set(['domain', 'edge', 'execution', 'records', 'operations']);

/** The lint rule of one wing: its files, less today's listed exceptions, may not import these. */
export interface WingOverride {
  readonly includes: string[];
  readonly linter: {
    readonly rules: {
      readonly style: {
        readonly noRestrictedImports: {
          readonly level: 'error';
          readonly options: { readonly patterns: { group: string[]; message: string }[] };
        };
      };
    };
  };
}

/**
 * biome.json's override for every wing of several files: a relative import that climbs into a wing
 * it may not import is an error, with the table's message. Files with a listed exception are left
 * out of their wing's rule; the house rules test checks them import by import.
 */
export function wingOverrides(exceptions: readonly string[]): WingOverride[] {
  const all = Object.keys(WINGS).filter((w) => w !== 'index.ts');
  return all.map((wing) => {
    const rule = WINGS[wing] as { mayImport: readonly string[]; instead: string };
    const forbidden = all.filter((w) => w !== wing && w !== 'core' && !rule.mayImport.includes(w));
    const excepted = [
      ...new Set(
        exceptions
          .map((e) => e.split(' -> ')[0] as string)
          .filter((file) => file.startsWith(`src/${wing}/`)),
      ),
    ].sort();
    return {
      includes: [`src/${wing}/**`, ...excepted.map((f) => `!${f}`)],
      linter: {
        rules: {
          style: {
            noRestrictedImports: {
              level: 'error',
              options: {
                patterns: [
                  {
                    group: forbidden.flatMap((w) => [`../**/${w}`, `../**/${w}/**`]),
                    message: `${wing}/ may import only ${[...rule.mayImport, 'core'].map((w) => `${w}/`).join(', ')}: ${rule.instead} (docs/architecture.md §2).`,
                  },
                ],
              },
            },
          },
        },
      },
    };
  });
}
