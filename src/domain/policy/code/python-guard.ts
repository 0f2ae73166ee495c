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
import { excerpt } from '../policy-verdict.js';
import { type CodeVerdict, refuseCode } from './code-verdict.js';
import { type PythonGuardOptions, runPython } from './python-child.js';
import { isAllowedModule, type ModuleMap, moduleMap } from './python-modules.js';

export type { PythonGuardOptions } from './python-child.js';

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

/**
 * The interpreter's own introspection attributes: frames of generators, coroutines and
 * tracebacks, and what a frame holds (its globals, its builtins: `eval` among them) or a code
 * object. Refused as attributes, as getattr names, as class-pattern keywords and inside strings
 * (`string.Formatter().get_field('0.gi_frame', …)` reads one by name).
 */
const INTROSPECTION_ATTRIBUTES = new Set([
  'gi_frame',
  'gi_code',
  'gi_yieldfrom',
  'cr_frame',
  'cr_code',
  'cr_await',
  'cr_origin',
  'ag_frame',
  'ag_code',
  'ag_await',
  'f_back',
  'f_builtins',
  'f_code',
  'f_globals',
  'f_locals',
  'f_trace',
  'tb_frame',
  'tb_next',
  'co_code',
  'co_consts',
  'co_names',
  'func_globals',
  'func_code',
]);

/**
 * What allowed modules offer that evaluates a string as code: typing's `get_type_hints` and a
 * `ForwardRef`'s `_evaluate` run `eval` on string annotations (`def f(x: "open('/etc/passwd')")`,
 * or a name bound to such a string), and functools' single dispatch calls `get_type_hints` on
 * what it registers. Found by reading the allowed modules for `eval`/`exec`; the `exec` of
 * dataclasses and namedtuple only ever sees identifiers they validate.
 */
const EVALUATING_ATTRIBUTES = new Set([
  'get_type_hints',
  'ForwardRef',
  '_evaluate',
  'singledispatch',
  'singledispatchmethod',
]);

/**
 * What reads attributes named by a string at run time through a format string: a Formatter's
 * `get_field('0.' + name, …)` is a getattr, and so are `vformat`, `format_field`, `get_value`,
 * `format_map`. Refused by name as attributes, imports and getattr literals (`code.dynamic_attribute`).
 */
const FORMAT_READERS = new Set([
  'Formatter',
  'get_field',
  'get_value',
  'vformat',
  'format_field',
  'format_map',
]);

/**
 * The dunder methods a class may define: construction, representation, comparison, containers,
 * iteration, arithmetic. Every other one changes how the interpreter itself treats the class
 * (`__instancecheck__` makes any subject match a class pattern, `__getattr__`, `__set_name__`,
 * `__init_subclass__`, `__class_getitem__`, `__reduce__`…) and is refused (`code.dunder_access`).
 */
const ALLOWED_DUNDER_METHODS = new Set([
  '__init__',
  '__repr__',
  '__str__',
  '__eq__',
  '__ne__',
  '__lt__',
  '__le__',
  '__gt__',
  '__ge__',
  '__hash__',
  '__len__',
  '__iter__',
  '__next__',
  '__contains__',
  '__getitem__',
  '__bool__',
  '__post_init__',
  ...[
    'add',
    'sub',
    'mul',
    'matmul',
    'truediv',
    'floordiv',
    'mod',
    'pow',
    'and',
    'or',
    'xor',
    'lshift',
    'rshift',
  ].flatMap((op) => [`__${op}__`, `__r${op}__`, `__i${op}__`]),
  '__neg__',
  '__pos__',
  '__abs__',
  '__invert__',
]);

/**
 * PEP 263: a comment on one of the first two lines that declares the source's encoding. Python
 * decodes a file by it (`utf-7` turns `+AGkAbQ…-` into `import os`), while the guard parses the
 * text it was given, so any declaration but UTF-8 is refused.
 */
const CODING_DECLARATION = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;

/** Dunder attributes that reach nothing beyond the object itself. */
const PLAIN_DUNDERS = new Set([
  '__init__',
  '__name__',
  '__main__',
  '__doc__',
  '__repr__',
  '__str__',
]);

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

function isPyNode(value: unknown): value is PyNode {
  return typeof value === 'object' && value !== null && typeof (value as PyNode)._t === 'string';
}

/** Runs the parser on `code`; never rejects. */
async function parsePython(code: string, options: PythonGuardOptions): Promise<ParseAnswer> {
  const answer = await runPython(PARSER, code, options);
  if ('failed' in answer) return answer;
  const parsed = answer.json;
  if (typeof parsed === 'object' && parsed !== null) {
    if ('tree' in parsed && isPyNode(parsed.tree)) return { tree: parsed.tree };
    if ('error' in parsed && parsed.error === 'syntax') {
      const line = 'line' in parsed && typeof parsed.line === 'number' ? parsed.line : null;
      return { error: 'syntax', line };
    }
  }
  return { failed: 'answer' };
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
  if (isAllowedModule(name)) return undefined;
  return refuseCode('code.import_not_allowed', `imports ${excerpt(name)}`, line(at));
}

function isConstantString(node: unknown): node is PyNode & { value: string } {
  return isPyNode(node) && node._t === 'Constant' && typeof node.value === 'string';
}

/** What the walk knows about the whole program while it judges one node. */
interface Context {
  /** The interpreter's modules and which of their attributes are modules (python-modules.ts). */
  readonly modules: ModuleMap;
  /** Names an import binds to a module, each with the module's name. */
  readonly bindings: ReadonlyMap<string, string>;
}

function judge(
  node: PyNode,
  parent: PyNode | undefined,
  field: string,
  context: Context,
): CodeVerdict | undefined {
  switch (node._t) {
    case 'Import':
      for (const alias of (node.names as PyNode[]) ?? []) {
        const name = typeof alias.name === 'string' ? alias.name : null;
        const refused = moduleRule(name, 0, node) ?? knownModule(name ?? '', node, context);
        if (refused) return refused;
      }
      return undefined;
    case 'ImportFrom':
      return judgeImportFrom(node, context);
    case 'Name': {
      const id = String(node.id);
      const rule = REFUSED_NAMES[id];
      if (rule !== undefined) return refuseCode(rule, `uses ${id}`, line(node));
      const bound = judgeDunderTarget(node, parent);
      if (bound !== undefined) return bound;
      if (FORMAT_READERS.has(id)) return attributeNameRule(id, 'uses', node);
      if (ATTRIBUTE_FUNCTIONS.has(id)) return judgeAttributeFunction(node, parent, field);
      const module = isLoad(node) ? context.bindings.get(id) : undefined;
      return module === undefined ? undefined : moduleUse(module, parent, field, node);
    }
    case 'Attribute': {
      const attr = String(node.attr);
      const named = attributeNameRule(attr, 'reads the attribute', node);
      if (named !== undefined) return named;
      const owner = moduleOf(node.value, context);
      if (owner === undefined) return undefined;
      const refused = moduleAttributeRule(owner, attr, node, context);
      if (refused !== undefined) return refused;
      const module = context.modules.get(owner)?.get(attr);
      return module === undefined ? undefined : moduleUse(module, parent, field, node);
    }
    case 'MatchClass':
      // `case C(attr=p)` reads `subject.attr`.
      for (const attr of (node.kwd_attrs as unknown[]) ?? []) {
        const refused = attributeNameRule(String(attr), 'matches the attribute', node);
        if (refused !== undefined) return refused;
      }
      return undefined;
    case 'Constant':
      return typeof node.value === 'string' ? stringRule(node.value, node) : undefined;
    case 'BinOp':
    case 'JoinedStr': {
      // `'_' + '_class__'` is a dunder string too.
      const folded = foldString(node);
      return folded === undefined ? undefined : stringRule(folded, node);
    }
    case 'Call':
      return judgeFormatCall(node);
    case 'ClassDef':
      return judgeClassDef(node);
    case 'FunctionDef':
    case 'AsyncFunctionDef':
      return judgeFunctionDef(node);
    default:
      return undefined;
  }
}

function isLoad(node: PyNode): boolean {
  return isPyNode(node.ctx) && node.ctx._t === 'Load';
}

/** The rule an attribute name breaks on any object, however it is read. */
function attributeNameRule(attr: string, what: string, at: PyNode): CodeVerdict | undefined {
  if (isDunder(attr) && !PLAIN_DUNDERS.has(attr)) {
    return refuseCode('code.dunder_access', `${what} ${excerpt(attr)}`, line(at));
  }
  if (EVALUATING_ATTRIBUTES.has(attr)) {
    return refuseCode('code.dynamic_eval', `${what} ${excerpt(attr)}`, line(at));
  }
  if (INTROSPECTION_ATTRIBUTES.has(attr)) {
    return refuseCode('code.introspection', `${what} ${excerpt(attr)}`, line(at));
  }
  if (FORMAT_READERS.has(attr)) {
    return refuseCode(
      'code.dynamic_attribute',
      `${what} ${excerpt(attr)} (it reads attributes named at run time)`,
      line(at),
    );
  }
  return undefined;
}

/** The rule a string breaks, wherever it stands: it names a dunder or a frame attribute. */
function stringRule(text: string, at: PyNode): CodeVerdict | undefined {
  if (holdsDunderName(text)) {
    return refuseCode('code.dunder_access', 'names a dunder attribute in a string', line(at));
  }
  if (holdsIntrospectionName(text)) {
    return refuseCode(
      'code.introspection',
      'names a frame or code attribute in a string',
      line(at),
    );
  }
  return undefined;
}

/**
 * The value of a string the code builds from constants only (`'_' + '_class__'`, an f-string of
 * constants, `'x' * 2`), or undefined.
 */
function foldString(node: unknown): string | undefined {
  if (!isPyNode(node)) return undefined;
  if (isConstantString(node)) return node.value;
  if (node._t === 'BinOp' && isPyNode(node.op) && node.op._t === 'Add') {
    const left = foldString(node.left);
    const right = foldString(node.right);
    return left === undefined || right === undefined ? undefined : left + right;
  }
  if (node._t === 'JoinedStr') {
    let text = '';
    for (const part of (node.values as unknown[]) ?? []) {
      if (isPyNode(part) && part._t === 'FormattedValue') {
        const inner = foldString(part.value);
        if (inner === undefined || part.format_spec !== null) return undefined;
        text += inner;
      } else {
        const piece = foldString(part);
        if (piece === undefined) return undefined;
        text += piece;
      }
    }
    return text;
  }
  return undefined;
}

/**
 * `fmt.format(…)` reads the attributes its format string names (`'{0.__globals__}'`): allowed
 * only on a string the guard can read (a literal, or one folded from literals), which the string
 * rules then judge; `str.format(fmt, …)` and a format string held in a name are refused.
 */
function judgeFormatCall(node: PyNode): CodeVerdict | undefined {
  const func = node.func;
  if (!isPyNode(func) || func._t !== 'Attribute' || func.attr !== 'format') return undefined;
  const text = foldString(func.value);
  if (text !== undefined) return stringRule(text, node);
  return refuseCode(
    'code.dynamic_attribute',
    'formats with a format string that is not a literal (it may read any attribute)',
    line(node),
  );
}

/**
 * A class definition: no metaclass (`metaclass=M` with `__instancecheck__` makes any subject
 * match a class pattern), and no other keyword (`__init_subclass__` arguments).
 */
function judgeClassDef(node: PyNode): CodeVerdict | undefined {
  for (const keyword of (node.keywords as PyNode[]) ?? []) {
    return refuseCode(
      'code.dunder_access',
      `defines a class with the keyword ${excerpt(String(keyword.arg ?? '**'))}`,
      line(node),
    );
  }
  return undefined;
}

/** `def __name__`: only the dunder methods of ALLOWED_DUNDER_METHODS. */
function judgeFunctionDef(node: PyNode): CodeVerdict | undefined {
  const name = String(node.name);
  if (isDunder(name) && !ALLOWED_DUNDER_METHODS.has(name)) {
    return refuseCode('code.dunder_access', `defines the method ${excerpt(name)}`, line(node));
  }
  return undefined;
}

/**
 * A dunder name bound by an assignment (`__match_args__ = …`, `__getattr__ = f`): only
 * `__match_args__` and `__slots__`, to a tuple or list of literal plain names, since a class
 * pattern reads the attributes `__match_args__` names (`('gi_' + 'frame',)`).
 */
function judgeDunderTarget(node: PyNode, parent: PyNode | undefined): CodeVerdict | undefined {
  const id = String(node.id);
  if (!isDunder(id) || isLoad(node) || PLAIN_DUNDERS.has(id) || ALLOWED_DUNDER_METHODS.has(id)) {
    return undefined;
  }
  const value = parent?._t === 'Assign' || parent?._t === 'AnnAssign' ? parent.value : undefined;
  if ((id === '__match_args__' || id === '__slots__') && isPlainNames(value)) return undefined;
  return refuseCode('code.dunder_access', `binds the name ${excerpt(id)}`, line(node));
}

/** A tuple or list of string literals, each a plain identifier that no attribute rule refuses. */
function isPlainNames(node: unknown): boolean {
  if (!isPyNode(node) || (node._t !== 'Tuple' && node._t !== 'List')) return false;
  return ((node.elts as unknown[]) ?? []).every(
    (e) =>
      isConstantString(e) &&
      /^[A-Za-z_][A-Za-z0-9_]*$/.test(e.value) &&
      !e.value.startsWith('__') &&
      attributeNameRule(e.value, '', e) === undefined,
  );
}

/** PEP 263 declarations on the first two lines: only UTF-8 (`utf-8`, `utf8`, `utf_8`). */
function codingRule(code: string): CodeVerdict | undefined {
  const lines = code.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/, 2);
  for (const [i, text] of lines.entries()) {
    const found = CODING_DECLARATION.exec(text);
    if (found === null) continue;
    const name = (found[1] ?? '').toLowerCase().replaceAll('_', '-');
    if (name !== 'utf-8' && name !== 'utf8') {
      return refuseCode(
        'code.syntax',
        `declares the source encoding ${excerpt(found[1] ?? '')}, not UTF-8`,
        i + 1,
      );
    }
  }
  return undefined;
}

function holdsIntrospectionName(text: string): boolean {
  for (const word of text.split(/[^A-Za-z0-9_]+/))
    if (INTROSPECTION_ATTRIBUTES.has(word)) return true;
  return false;
}

/** The module an expression denotes (an imported name, or a chain of module attributes). */
function moduleOf(node: unknown, context: Context): string | undefined {
  if (!isPyNode(node)) return undefined;
  if (node._t === 'Name') return isLoad(node) ? context.bindings.get(String(node.id)) : undefined;
  if (node._t === 'Attribute') {
    const owner = moduleOf(node.value, context);
    return owner === undefined ? undefined : context.modules.get(owner)?.get(String(node.attr));
  }
  return undefined;
}

/**
 * `module.attr`: refused when the name is private (`random._os`, `string._re`: never the module's
 * interface), when it is a module outside the list (`typing.sys`, `uuid.os`, `enum.bltns`), or
 * when the guard does not know the module's attributes at all.
 */
function moduleAttributeRule(
  module: string,
  attr: string,
  at: PyNode,
  context: Context,
): CodeVerdict | undefined {
  if (!isAllowedModule(module)) {
    return refuseCode('code.module_attribute', `reaches the module ${excerpt(module)}`, line(at));
  }
  const attributes = context.modules.get(module);
  if (attributes === undefined) {
    return refuseCode(
      'code.module_attribute',
      `reads an attribute of ${excerpt(module)}, whose attributes the guard cannot list`,
      line(at),
    );
  }
  if (attr.startsWith('_') && !PLAIN_DUNDERS.has(attr)) {
    return refuseCode(
      'code.module_attribute',
      `reads the private attribute ${excerpt(`${module}.${attr}`)}`,
      line(at),
    );
  }
  const target = attributes.get(attr);
  if (target !== undefined && !isAllowedModule(target)) {
    return refuseCode(
      'code.module_attribute',
      `reaches the module ${excerpt(target)} through ${excerpt(`${module}.${attr}`)}`,
      line(at),
    );
  }
  return undefined;
}

/**
 * A module may only have its attributes read (`json.dumps`): bound to another name, passed,
 * returned, stored or formatted, it would carry `random._os` past the attribute rule above.
 */
function moduleUse(
  module: string,
  parent: PyNode | undefined,
  field: string,
  at: PyNode,
): CodeVerdict | undefined {
  if (parent?._t === 'Attribute' && field === 'value') return undefined;
  return refuseCode(
    'code.module_attribute',
    `uses the module ${excerpt(module)} other than to read its attributes`,
    line(at),
  );
}

/** The guard's module map must know the module: what it re-exports is then known too. */
function knownModule(name: string, at: PyNode, context: Context): CodeVerdict | undefined {
  if (context.modules.has(name)) return undefined;
  return refuseCode(
    'code.module_attribute',
    `imports ${excerpt(name)}, whose attributes the guard cannot list`,
    line(at),
  );
}

/** `from m import a`: an allowed, known m, and each `a` judged as the attribute `m.a`. */
function judgeImportFrom(node: PyNode, context: Context): CodeVerdict | undefined {
  const module = typeof node.module === 'string' ? node.module : null;
  const refused = moduleRule(module, typeof node.level === 'number' ? node.level : 0, node);
  if (refused) return refused;
  const names = (node.names as PyNode[]) ?? [];
  // `from m import *` binds names the guard cannot list.
  if (names.some((a) => a.name === '*')) {
    return refuseCode('code.star_import', 'imports * from a module', line(node));
  }
  const unknown = knownModule(module ?? '', node, context);
  if (unknown) return unknown;
  for (const alias of names) {
    const attr = String(alias.name);
    const rule =
      attributeNameRule(attr, 'imports the attribute', node) ??
      moduleAttributeRule(module ?? '', attr, node, context);
    if (rule !== undefined) return rule;
  }
  return undefined;
}

/** Every name an import binds to a module: `import a.b` binds a, `import a.b as c` binds c. */
function moduleBindings(tree: PyNode, modules: ModuleMap): Map<string, string> {
  const bindings = new Map<string, string>();
  const stack: PyNode[] = [tree];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node._t === 'Import') {
      for (const alias of (node.names as PyNode[]) ?? []) {
        const name = String(alias.name);
        const root = name.split('.')[0] ?? name;
        if (typeof alias.asname === 'string') bindings.set(alias.asname, name);
        else bindings.set(root, root);
      }
    } else if (node._t === 'ImportFrom' && typeof node.module === 'string') {
      for (const alias of (node.names as PyNode[]) ?? []) {
        const target = modules.get(node.module)?.get(String(alias.name));
        const bound = typeof alias.asname === 'string' ? alias.asname : String(alias.name);
        if (target !== undefined) bindings.set(bound, target);
      }
    }
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) for (const child of value) isPyNode(child) && stack.push(child);
      else if (isPyNode(value)) stack.push(value);
    }
  }
  return bindings;
}

/** getattr(obj, 'name') with a literal, non-dunder name is plain attribute access; else refused. */
function judgeAttributeFunction(
  node: PyNode,
  parent: PyNode | undefined,
  field: string,
): CodeVerdict | undefined {
  const args = parent?._t === 'Call' && field === 'func' ? (parent.args as unknown[]) : undefined;
  const name = args?.[1];
  if (args !== undefined && isConstantString(name)) {
    return attributeNameRule(name.value, `uses ${String(node.id)} on`, node);
  }
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
  const coding = codingRule(code);
  if (coding !== undefined) return coding;
  const [answer, modules] = await Promise.all([parsePython(code, options), moduleMap(options)]);
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
  // Without the module map the guard cannot tell `random.choice` from `random._os`.
  if (modules === undefined) {
    return refuseCode('code.parser_unavailable', 'cannot be checked (no module map)', undefined);
  }
  const context: Context = { modules, bindings: moduleBindings(answer.tree, modules) };
  const stack: [PyNode, PyNode | undefined, string][] = [[answer.tree, undefined, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, parent, field] = next;
    const verdict = judge(node, parent, field, context);
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
