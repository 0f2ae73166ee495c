/**
 * @module The static guard for Python code arguments: parsed by the host's own CPython `ast`
 * module (the grammar the code would run under) in a child process that only parses — no code
 * of the argument is ever run — with a hard timeout and output cap; the tree comes back as JSON
 * and is judged here. Refuses imports outside a list of computation modules, dynamic evaluation
 * (eval, exec, compile, __import__), namespace tricks (globals(), vars(), __builtins__), dynamic
 * attributes (getattr and friends with a name chosen at run time) and dunder attributes, the way
 * sandbox escapes reach `os` or `subprocess` without importing them. Fails closed: no parser,
 * a timeout or an unreadable answer refuses the code.
 */
import { spawn } from 'node:child_process';
import { excerpt } from '../policy-verdict.js';
import { type CodeVerdict, PARSE_TIMEOUT_MS, refuseCode } from './code-verdict.js';

/** Modules code may import: computation only (no os, sys, subprocess, socket, io, importlib…). */
const ALLOWED_MODULES = new Set([
  'array',
  'base64',
  'binascii',
  'bisect',
  'calendar',
  'cmath',
  'collections',
  'copy',
  'dataclasses',
  'datetime',
  'decimal',
  'difflib',
  'enum',
  'fractions',
  'functools',
  'hashlib',
  'heapq',
  'hmac',
  'itertools',
  'json',
  'math',
  'pprint',
  'random',
  're',
  'statistics',
  'string',
  'textwrap',
  'typing',
  'unicodedata',
  'uuid',
]);

/** Names whose every use is refused, with the rule each breaks. */
const REFUSED_NAMES: Readonly<Record<string, string>> = {
  eval: 'code.dynamic_eval',
  exec: 'code.dynamic_eval',
  compile: 'code.dynamic_eval',
  breakpoint: 'code.dynamic_eval',
  // help() imports pydoc, which may start a pager process.
  help: 'code.dynamic_import',
  __import__: 'code.dynamic_import',
  globals: 'code.dynamic_scope',
  locals: 'code.dynamic_scope',
  vars: 'code.dynamic_scope',
  __builtins__: 'code.dynamic_scope',
  __loader__: 'code.dynamic_scope',
  __spec__: 'code.dynamic_scope',
  open: 'code.file_access',
};

/** Builtins that read or write an attribute named by their second argument. */
const ATTRIBUTE_FUNCTIONS = new Set(['getattr', 'setattr', 'delattr', 'hasattr']);

/** Dunder attributes that reach nothing beyond the object itself. */
const PLAIN_DUNDERS = new Set([
  '__init__',
  '__name__',
  '__main__',
  '__doc__',
  '__repr__',
  '__str__',
]);

/** Longest JSON answer the parser may give before it is stopped (a tree of MAX_CODE_CHARS fits). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * Reads the code from stdin, parses it, prints one JSON line: the tree (each node its type `_t`,
 * line `_l` and fields) or a syntax error. `-I -S` keeps the environment, user site and `site`
 * out; nothing but `ast`, `json`, `math` and `sys` is imported.
 */
const PARSER = `
import ast, json, math, sys
sys.setrecursionlimit(20000)
def conv(n):
    if isinstance(n, ast.AST):
        d = {"_t": type(n).__name__, "_l": getattr(n, "lineno", None)}
        for f, v in ast.iter_fields(n):
            d[f] = conv(v)
        return d
    if isinstance(n, list):
        return [conv(x) for x in n]
    if isinstance(n, float) and not math.isfinite(n):
        return repr(n)
    if n is None or isinstance(n, (str, int, float, bool)):
        return n
    return repr(n)
try:
    tree = ast.parse(sys.stdin.read(), mode="exec")
    out = {"tree": conv(tree)}
except SyntaxError as e:
    out = {"error": "syntax", "line": e.lineno}
except (ValueError, RecursionError, MemoryError, OverflowError) as e:
    out = {"error": "syntax", "line": None}
sys.stdout.write(json.dumps(out))
`;

interface PyNode {
  readonly _t: string;
  readonly _l: number | null;
  readonly [field: string]: unknown;
}

type ParseAnswer =
  | { readonly tree: PyNode }
  | { readonly error: 'syntax'; readonly line: number | null }
  | { readonly failed: 'timeout' | 'unavailable' | 'answer' };

export interface PythonGuardOptions {
  /** The interpreter whose `ast` parses; `python3` on PATH by default. */
  readonly python?: string;
  readonly timeoutMs?: number;
}

function isPyNode(value: unknown): value is PyNode {
  return typeof value === 'object' && value !== null && typeof (value as PyNode)._t === 'string';
}

/** Runs the parser on `code`; never rejects. */
function parsePython(code: string, options: PythonGuardOptions): Promise<ParseAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: ParseAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(answer);
    };
    const child = spawn(options.python ?? 'python3', ['-I', '-S', '-B', '-c', PARSER], {
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
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        if (typeof parsed === 'object' && parsed !== null) {
          if ('tree' in parsed && isPyNode(parsed.tree)) return done({ tree: parsed.tree });
          if ('error' in parsed && parsed.error === 'syntax') {
            const line = 'line' in parsed && typeof parsed.line === 'number' ? parsed.line : null;
            return done({ error: 'syntax', line });
          }
        }
      } catch {
        // Falls through: an answer that is not the parser's is no answer.
      }
      done({ failed: 'answer' });
    });
    child.stdin.on('error', () => done({ failed: 'answer' }));
    child.stdin.end(code, 'utf8');
  });
}

function line(node: PyNode): number | undefined {
  return node._l ?? undefined;
}

function isDunder(name: string): boolean {
  return name.length > 4 && name.startsWith('__') && name.endsWith('__');
}

/** A string constant that names a dunder anywhere (`'__class__'`, `'{0.__globals__}'`). */
function holdsDunderName(text: string): boolean {
  for (let at = text.indexOf('__'); at !== -1; at = text.indexOf('__', at + 2)) {
    let end = at + 2;
    while (end < text.length && /[A-Za-z0-9_]/.test(text[end] ?? '')) end += 1;
    const word = text.slice(at, end);
    if (word.length > 4 && word.endsWith('__') && !PLAIN_DUNDERS.has(word)) return true;
    at = Math.max(at, end - 2);
  }
  return false;
}

function moduleRule(name: string | null, level: number, at: PyNode): CodeVerdict | undefined {
  if (level > 0 || name === null) {
    return refuseCode('code.import_not_allowed', 'imports a relative module', line(at));
  }
  const root = name.split('.')[0] ?? name;
  if (ALLOWED_MODULES.has(root)) return undefined;
  return refuseCode('code.import_not_allowed', `imports ${excerpt(name)}`, line(at));
}

function isConstantString(node: unknown): node is PyNode & { value: string } {
  return isPyNode(node) && node._t === 'Constant' && typeof node.value === 'string';
}

function judge(node: PyNode, parent: PyNode | undefined, field: string): CodeVerdict | undefined {
  switch (node._t) {
    case 'Import':
      for (const alias of (node.names as PyNode[]) ?? []) {
        const refused = moduleRule(typeof alias.name === 'string' ? alias.name : null, 0, node);
        if (refused) return refused;
      }
      return undefined;
    case 'ImportFrom': {
      const refused = moduleRule(
        typeof node.module === 'string' ? node.module : null,
        typeof node.level === 'number' ? node.level : 0,
        node,
      );
      if (refused) return refused;
      // `from m import *` binds names the guard cannot list.
      if (((node.names as PyNode[]) ?? []).some((a) => a.name === '*')) {
        return refuseCode('code.star_import', 'imports * from a module', line(node));
      }
      return undefined;
    }
    case 'Name': {
      const id = String(node.id);
      const rule = REFUSED_NAMES[id];
      if (rule !== undefined) return refuseCode(rule, `uses ${id}`, line(node));
      if (ATTRIBUTE_FUNCTIONS.has(id)) return judgeAttributeFunction(node, parent, field);
      return undefined;
    }
    case 'Attribute': {
      const attr = String(node.attr);
      if (isDunder(attr) && !PLAIN_DUNDERS.has(attr)) {
        return refuseCode('code.dunder_access', `reads the attribute ${excerpt(attr)}`, line(node));
      }
      return undefined;
    }
    case 'Constant':
      if (typeof node.value === 'string' && holdsDunderName(node.value)) {
        return refuseCode('code.dunder_access', 'names a dunder attribute in a string', line(node));
      }
      return undefined;
    default:
      return undefined;
  }
}

/** getattr(obj, 'name') with a literal, non-dunder name is plain attribute access; else refused. */
function judgeAttributeFunction(
  node: PyNode,
  parent: PyNode | undefined,
  field: string,
): CodeVerdict | undefined {
  const args = parent?._t === 'Call' && field === 'func' ? (parent.args as unknown[]) : undefined;
  const name = args?.[1];
  if (args !== undefined && isConstantString(name) && !isDunder(name.value)) return undefined;
  return refuseCode(
    'code.dynamic_attribute',
    `uses ${String(node.id)} with an attribute name chosen at run time`,
    line(node),
  );
}

/**
 * Checks Python `code`: the first rule it breaks, or allowed. Never rejects. Refused unchecked
 * (fail closed): a syntax error (`code.syntax`), no interpreter (`code.parser_unavailable`), a
 * parse past the timeout (`code.timeout`) or an answer that is not the parser's.
 */
export async function checkPython(
  code: string,
  options: PythonGuardOptions = {},
): Promise<CodeVerdict> {
  const answer = await parsePython(code, options);
  if ('failed' in answer) {
    switch (answer.failed) {
      case 'timeout':
        return refuseCode('code.timeout', 'took too long to parse', undefined);
      case 'unavailable':
        return refuseCode(
          'code.parser_unavailable',
          'cannot be parsed here (no python3)',
          undefined,
        );
      case 'answer':
        return refuseCode('code.parser_unavailable', 'could not be parsed', undefined);
    }
  }
  if ('error' in answer) {
    return refuseCode('code.syntax', 'is not valid Python', answer.line ?? undefined);
  }
  const stack: [PyNode, PyNode | undefined, string][] = [[answer.tree, undefined, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, parent, field] = next;
    const verdict = judge(node, parent, field);
    if (verdict !== undefined) return verdict;
    for (const [key, value] of Object.entries(node)) {
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) {
          const child: unknown = value[i];
          if (isPyNode(child)) stack.push([child, node, key]);
        }
      } else if (isPyNode(value)) {
        stack.push([value, node, key]);
      }
    }
  }
  return { ok: true, value: { language: 'python' } };
}
