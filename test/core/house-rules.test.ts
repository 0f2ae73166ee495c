/**
 * @module The rules that keep the house as wings (docs/architecture.md §2), checked on every run:
 * which wing may import which, no cycle between folders, dialect SQL only in the store's dialect
 * folders, size budgets, gate steps cited by name, no service completed with a setter.
 *
 * Today's exceptions are listed in house-exceptions.json. That list may only shrink: an exception
 * that no longer occurs fails the test too (remove it), and a file over its budget may not grow.
 * `TOOLGATE_HOUSE_PRINT=file.json` writes the exceptions found now there instead of checking them,
 * to shrink the list after a fix.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { cycles } from '../support/cycles.js';
import { MULTI_ROOM, WINGS, wingOverrides } from '../support/wings.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const EXCEPTIONS = JSON.parse(
  readFileSync(join(ROOT, 'test', 'core', 'house-exceptions.json'), 'utf8'),
) as {
  imports: string[];
  cycles: string[];
  dialect: string[];
  setters: string[];
  hostLogic: string[];
  fileLines: Record<string, number>;
  functionLines: Record<string, number>;
};

interface Source {
  readonly path: string; // repository-relative, with '/'
  readonly text: string;
}

function sources(root: string, ext = '.ts'): Source[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => {
      const file = join(e.parentPath, e.name);
      return { path: relative(ROOT, file).split(sep).join('/'), text: readFileSync(file, 'utf8') };
    })
    .sort((a, b) => a.path.localeCompare(b.path));
}

const SRC_FILES = sources(SRC);

/** With TOOLGATE_HOUSE_PRINT set, what each check found, written there at the end. */
const PRINT = process.env.TOOLGATE_HOUSE_PRINT;
const printed: Record<string, unknown> = {};
after(() => {
  if (PRINT) writeFileSync(PRINT, `${JSON.stringify(printed, null, 2)}\n`);
});

/** Every relative import (static, type-only, re-export and dynamic) of a file, as repo paths. */
function importsOf(file: Source): string[] {
  const { importedFiles } = ts.preProcessFile(file.text, true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) =>
      normalize(join(dirname(file.path), s))
        .split(sep)
        .join('/'),
    );
}

function wingOf(path: string): string {
  return path.split('/')[1] ?? '';
}

function roomOf(path: string): string {
  const parts = path.split('/');
  const wing = parts[1] ?? '';
  return MULTI_ROOM.has(wing) && parts.length > 3 ? `${wing}/${parts[2]}` : wing;
}

/** Compares what was found with its exceptions: nothing new, nothing stale. */
function checkAgainst(
  kind: keyof typeof EXCEPTIONS,
  what: string,
  found: string[],
  allowed: readonly string[],
): void {
  if (PRINT) {
    printed[kind] = found;
    return;
  }
  const allow = new Set(allowed);
  const now = new Set(found);
  const fresh = found.filter((f) => !allow.has(f));
  const stale = allowed.filter((a) => !now.has(a));
  assert.deepEqual(fresh, [], `new ${what}:\n${fresh.join('\n')}`);
  assert.deepEqual(
    stale,
    [],
    `${what} fixed: remove them from test/core/house-exceptions.json:\n${stale.join('\n')}`,
  );
}

test('every src/ entry is a wing of the table', () => {
  // Sources only (the compiled copy the suite runs on holds tsc's .js beside each .ts).
  const entries = readdirSync(SRC)
    .filter((e) => !e.endsWith('.js'))
    .sort();
  assert.deepEqual(entries, Object.keys(WINGS).sort());
  // About a dozen entries: the top level shows how a call flows.
  assert.ok(entries.length <= 13, `${entries.length} entries under src/`);
});

test('each wing imports only the wings below it (and core/); the message says what instead', () => {
  const found: string[] = [];
  const messages: string[] = [];
  let crossing = 0;
  for (const file of SRC_FILES) {
    const from = wingOf(file.path);
    const rule = WINGS[from];
    assert.ok(rule, `${file.path} is in no wing`);
    for (const target of new Set(importsOf(file))) {
      if (!target.startsWith('src/')) continue;
      const to = wingOf(target);
      if (to === from || to === 'core') continue;
      crossing += 1;
      if (rule.mayImport.includes(to)) continue;
      const entry = `${file.path} -> ${to}`;
      found.push(entry);
      if (!EXCEPTIONS.imports.includes(entry))
        messages.push(`${file.path} imports ${target}: ${rule.instead}`);
    }
  }
  assert.ok(crossing > 200, 'the scan found the imports between wings');
  checkAgainst(
    'imports',
    'imports against the wing table',
    [...new Set(found)].sort(),
    EXCEPTIONS.imports,
  );
  if (!PRINT) assert.deepEqual(messages, []);
});

test('no two folders import each other, directly or through others', () => {
  const graph = new Map<string, Set<string>>();
  const edges: string[] = [];
  for (const file of SRC_FILES) {
    const from = roomOf(file.path);
    for (const target of importsOf(file)) {
      if (!target.startsWith('src/')) continue;
      const to = roomOf(target);
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      if (!graph.get(from)?.has(to)) edges.push(`${from} -> ${to}`);
      graph.get(from)?.add(to);
    }
  }
  assert.ok(graph.size > 20, 'the scan found the folders');
  if (PRINT) printed.cycles = cycles(graph).map((c) => c.join(' <-> '));
  // The edges of today's cycles are listed; without them no cycle may remain.
  for (const edge of EXCEPTIONS.cycles) {
    const [from, to] = edge.split(' -> ') as [string, string];
    graph.get(from)?.delete(to);
  }
  assert.deepEqual(cycles(graph), [], 'a folder-level import cycle');
  const listedStillThere = EXCEPTIONS.cycles.filter((e) => edges.includes(e));
  assert.deepEqual(
    listedStillThere,
    EXCEPTIONS.cycles,
    'a cycle edge was removed: take it off the list',
  );
});

test('the cycle finder finds a cycle between folders', () => {
  const g = new Map([
    ['gate', new Set(['records/audit'])],
    ['records/audit', new Set(['records/store', 'gate'])],
    ['records/store', new Set<string>()],
  ]);
  assert.deepEqual(cycles(g), [['gate', 'records/audit']]);
  g.get('records/audit')?.delete('gate');
  assert.deepEqual(cycles(g), []);
});

/** SQL only one database speaks; and code that branches on which database it talks to. */
const DIALECT_SQL =
  /\bplpgsql\b|\bpragma\b|sqlite_master|\bpg_[a-z_]+\(|\bbigserial\b|\bautoincrement\b|returns trigger/i;
const DIALECT_BRANCH =
  /(?:===?|!==?)\s*'(?:postgres|sqlite)'|'(?:postgres|sqlite)'\s*(?:===?|!==?)/;
const DIALECT_FOLDER = /^src\/records\/store\/(?:sqlite|postgres)\//;

test("each database's own SQL lives only in the store's dialect folders", () => {
  const found: string[] = [];
  for (const file of SRC_FILES) {
    if (DIALECT_FOLDER.test(file.path)) continue;
    const lines = file.text.split('\n');
    lines.forEach((line, i) => {
      // The store picks its dialect in its own folder; nowhere else asks which one it is.
      const branch = DIALECT_BRANCH.test(line) && !file.path.startsWith('src/records/store/');
      if (DIALECT_SQL.test(line) || branch) found.push(`${file.path}:${i + 1}`);
    });
  }
  // The scan sees the dialect folders' own SQL (so it is not vacuous).
  assert.ok(
    SRC_FILES.some((f) => DIALECT_FOLDER.test(f.path) && DIALECT_SQL.test(f.text)),
    'the dialect folders hold dialect SQL',
  );
  checkAgainst(
    'dialect',
    'dialect SQL outside src/records/store/{sqlite,postgres}/',
    found.map((f) => f.replace(/:\d+$/, '')).filter((f, i, all) => all.indexOf(f) === i),
    EXCEPTIONS.dialect,
  );
});

const FILE_BUDGET = 600;
const FUNCTION_BUDGET = 100;

/** Every function, method, accessor and arrow function of a file longer than the budget. */
function longFunctions(file: Source): Map<string, number> {
  const sf = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
  const long = new Map<string, number>();
  const nameOf = (node: ts.Node): string => {
    const named = node as { name?: ts.Node };
    if (named.name && ts.isIdentifier(named.name)) return named.name.text;
    if (named.name && ts.isPrivateIdentifier(named.name)) return named.name.text;
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      const parent = node.parent;
      if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name))
        return parent.name.text;
      if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name))
        return parent.name.text;
      if (parent && ts.isCallExpression(parent)) return `${parent.expression.getText(sf)}(…)`;
    }
    if (ts.isConstructorDeclaration(node)) return 'constructor';
    return '(anonymous)';
  };
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > FUNCTION_BUDGET) {
        let key = `${file.path}#${nameOf(node)}`;
        for (let n = 2; long.has(key); n += 1) key = `${file.path}#${nameOf(node)}~${n}`;
        long.set(key, lines);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return long;
}

function checkBudget(
  kind: 'fileLines' | 'functionLines',
  found: Map<string, number>,
  allowed: Record<string, number>,
) {
  if (PRINT) {
    printed[kind] = Object.fromEntries(found);
    return;
  }
  const grown: string[] = [];
  const fresh: string[] = [];
  for (const [key, lines] of found) {
    const limit = allowed[key];
    if (limit === undefined) fresh.push(`${key}: ${lines} lines`);
    else if (lines > limit) grown.push(`${key}: ${lines} lines, listed at ${limit}`);
  }
  const stale = Object.keys(allowed).filter((key) => !found.has(key));
  assert.deepEqual(fresh, [], `over the ${kind} budget:\n${fresh.join('\n')}`);
  assert.deepEqual(
    grown,
    [],
    `a listed ${kind} grew (the list may only shrink):\n${grown.join('\n')}`,
  );
  assert.deepEqual(
    stale,
    [],
    `within the ${kind} budget now: remove from test/core/house-exceptions.json:\n${stale.join('\n')}`,
  );
}

test(`a file has at most ${FILE_BUDGET} lines, a function at most ${FUNCTION_BUDGET}`, () => {
  const files = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const file of SRC_FILES) {
    const lines = file.text.split('\n').length - (file.text.endsWith('\n') ? 1 : 0);
    if (lines > FILE_BUDGET) files.set(file.path, lines);
    for (const [key, n] of longFunctions(file)) functions.set(key, n);
  }
  checkBudget('fileLines', files, EXCEPTIONS.fileLines);
  checkBudget('functionLines', functions, EXCEPTIONS.functionLines);
});

test('the function measure sees a long arrow function and a long method', () => {
  const body = Array.from({ length: FUNCTION_BUDGET }, (_, i) => `  const a${i} = ${i};`).join(
    '\n',
  );
  const long = longFunctions({
    path: 'x.ts',
    text: `export const f = () => {\n${body}\n};\nclass C {\n  m() {\n${body}\n  }\n}\n`,
  });
  assert.deepEqual([...long.keys()], ['x.ts#f', 'x.ts#m']);
});

/**
 * A gate step is cited by its name (`policy`, `audit-post`), never by its position, which moves
 * when a step is added. Texts that number something else are listed with why.
 */
const POSITION = /\b[Ss]teps? \d+\b/;
const NOT_GATE_STEPS: Record<string, string> = {
  'test/fixtures/scan-corpus/test.json': 'a tool description of the scan corpus',
  'test/mcp/mcp-upstream-protocol.test.ts': "an upstream's progress messages",
  'test/e2e/detector-story.test.ts': 'the steps of the support-desk story',
};

test('gate steps are cited by name, never by position', () => {
  const found: string[] = [];
  for (const folder of ['src', 'test', 'docs', 'bench', 'scripts', 'deploy']) {
    for (const ext of ['.ts', '.md', '.mjs', '.json']) {
      for (const file of sources(join(ROOT, folder), ext)) {
        if (file.path in NOT_GATE_STEPS) continue;
        file.text.split('\n').forEach((line, i) => {
          if (POSITION.test(line)) found.push(`${file.path}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  }
  assert.deepEqual(found, []);
  // Each listed exception still numbers something.
  for (const path of Object.keys(NOT_GATE_STEPS))
    assert.match(readFileSync(join(ROOT, path), 'utf8'), POSITION, path);
});

test('the composition completes no service with a setter after construction', () => {
  const found: string[] = [];
  for (const file of SRC_FILES.filter((f) => f.path.startsWith('src/host/'))) {
    for (const m of file.text.matchAll(/\b(\w+)\.(set[A-Z]\w*)\(/g))
      found.push(`${file.path}: ${m[1]}.${m[2]}`);
  }
  checkAgainst('setters', 'setter wiring in src/host/', found.sort(), EXCEPTIONS.setters);
});

/** host/ composes: each wing's wiring in its own short file, and openGateway only calls them. */
const HOST_FILE_BUDGET = 200;
const OPEN_GATEWAY_BUDGET = 150;

/** The statements that decide or repeat; a host file holds none (a ternary may pick an option). */
function decidingStatements(file: Source): string[] {
  const sf = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
  const kinds = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIfStatement(node)) kinds.add('if');
    else if (ts.isSwitchStatement(node)) kinds.add('switch');
    else if (ts.isTryStatement(node)) kinds.add('try');
    else if (ts.isIterationStatement(node, false)) kinds.add('loop');
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return [...kinds].sort();
}

test('host/ decides nothing: short files, a short openGateway, no branch, loop or try', () => {
  const found: string[] = [];
  for (const file of SRC_FILES.filter((f) => f.path.startsWith('src/host/'))) {
    const lines = file.text.split('\n').length - (file.text.endsWith('\n') ? 1 : 0);
    if (lines > HOST_FILE_BUDGET) found.push(`${file.path}: ${lines} lines`);
    const decides = decidingStatements(file);
    if (decides.length > 0) found.push(`${file.path}: ${decides.join(', ')}`);
  }
  const root = SRC_FILES.find((f) => f.path === 'src/host/toolgate.ts');
  assert.ok(root, 'src/host/toolgate.ts holds openGateway');
  const sf = ts.createSourceFile(root.path, root.text, ts.ScriptTarget.Latest, true);
  const open = sf.statements.find(
    (s): s is ts.FunctionDeclaration =>
      ts.isFunctionDeclaration(s) && s.name?.text === 'openGateway',
  );
  assert.ok(open, 'openGateway is a function of src/host/toolgate.ts');
  const span =
    sf.getLineAndCharacterOfPosition(open.getEnd()).line -
    sf.getLineAndCharacterOfPosition(open.getStart(sf)).line +
    1;
  if (span > OPEN_GATEWAY_BUDGET) found.push(`src/host/toolgate.ts#openGateway: ${span} lines`);
  checkAgainst('hostLogic', 'logic in src/host/', found.sort(), EXCEPTIONS.hostLogic);
});

test('the host check sees a branch, a loop and a try', () => {
  const text = 'if (a) b();\nfor (const x of y) z(x);\ntry { f(); } catch {}\n';
  assert.deepEqual(decidingStatements({ path: 'x.ts', text }), ['if', 'loop', 'try']);
});

test("biome.json's wing rules are the wing table's, less the listed exceptions", () => {
  const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as {
    overrides?: { includes: string[] }[];
  };
  const wingRules = (config.overrides ?? []).filter((o) =>
    /^src\/[^/]+\/\*\*$/.test(o.includes[0] ?? ''),
  );
  assert.deepEqual(
    wingRules,
    wingOverrides(EXCEPTIONS.imports),
    'run `node --import tsx scripts/wing-lint.ts` to write them',
  );
});

test('inside records/: the store and the chain never import the audit log; the log uses the store only through its index', () => {
  const found: string[] = [];
  for (const file of SRC_FILES) {
    const room = roomOf(file.path);
    for (const target of importsOf(file)) {
      const to = roomOf(target);
      if ((room === 'records/store' || room === 'records/audit-chain') && to === 'records/audit')
        found.push(
          `${file.path} imports ${target}: hashing and linking live in records/audit-chain/`,
        );
      if (
        room === 'records/audit' &&
        to === 'records/store' &&
        target !== 'src/records/store/index.js'
      )
        found.push(
          `${file.path} imports ${target}: use records/store/index.js (Store.audit, Store.db)`,
        );
    }
  }
  assert.deepEqual(found, []);
});
