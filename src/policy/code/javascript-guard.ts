/**
 * @module The static guard for JavaScript code arguments: parsed by acorn (the real ECMAScript
 * grammar, identifiers with their escapes decoded), then every node of the tree is walked.
 * Refuses what deletes files, spawns processes or opens sockets (by the modules and globals that
 * can), dynamic evaluation, imports it cannot resolve, and the dynamic access that would hide
 * either from a static reader. Deny by default: an unknown module is refused, not guessed at.
 */
import { type Node, parse } from 'acorn';
import { excerpt } from '../policy-verdict.js';
import { type CodeVerdict, refuseCode } from './code-verdict.js';

/**
 * Modules code may import: computation only. Everything else (fs, child_process, net, http,
 * worker_threads, vm, module, relative files…) is refused, with or without `node:`.
 */
const ALLOWED_MODULES = new Set([
  'assert',
  'assert/strict',
  'buffer',
  'crypto',
  'events',
  'path',
  'path/posix',
  'querystring',
  'string_decoder',
  'url',
  'util',
  'util/types',
  'zlib',
]);

/** Globals that evaluate strings as code, or compile code the guard cannot read. */
const EVAL_GLOBALS = new Set(['eval', 'Function', 'WebAssembly']);
/** Globals that open sockets or start threads. */
const NETWORK_GLOBALS = new Set(['fetch', 'WebSocket', 'XMLHttpRequest', 'EventSource', 'Worker']);
/**
 * Roots that reach everything else (the global object, the module system, reflection, other
 * runtimes' handles): refused outright, except the few `process` and `module` members below.
 */
const DANGEROUS_ROOTS = new Set([
  'process',
  'globalThis',
  'global',
  'window',
  'self',
  'module',
  'Reflect',
  'Deno',
  'Bun',
]);
/** The members of a dangerous root that do none of the refused things. */
const ROOT_MEMBERS: Readonly<Record<string, ReadonlySet<string>>> = {
  process: new Set([
    'argv',
    'stdout',
    'stderr',
    'exitCode',
    'exit',
    'hrtime',
    'nextTick',
    'memoryUsage',
    'uptime',
  ]),
  module: new Set(['exports']),
};
/**
 * Member names that lead to the Function constructor (`(()=>{}).constructor('…')`), to
 * prototypes behind the guard's back, or to native bindings, whatever object they are read on.
 */
const DANGEROUS_MEMBERS = new Set([
  'constructor',
  '__proto__',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'binding',
  '_linkedBinding',
  'dlopen',
  'mainModule',
  'getBuiltinModule',
  '_load',
]);

interface AnyNode extends Node {
  readonly [key: string]: unknown;
}

function isNode(value: unknown): value is AnyNode {
  return typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
}

/** The value of a key the guard can compute without running anything, or undefined. */
function constantString(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  if (node.type === 'Literal') {
    const v = node.value;
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  }
  if (node.type === 'TemplateLiteral') {
    const quasis = node.quasis as AnyNode[];
    const expressions = node.expressions as AnyNode[];
    if (expressions.length > 0) return undefined;
    return (quasis[0]?.value as { cooked?: string } | undefined)?.cooked ?? undefined;
  }
  if (node.type === 'BinaryExpression' && node.operator === '+') {
    const left = constantString(node.left);
    const right = constantString(node.right);
    return left === undefined || right === undefined ? undefined : left + right;
  }
  return undefined;
}

function lineOf(node: AnyNode): number | undefined {
  return (node.loc as { start: { line: number } } | undefined)?.start.line;
}

function moduleRule(specifier: string | undefined, at: AnyNode): CodeVerdict | undefined {
  if (specifier === undefined) {
    return refuseCode('code.dynamic_import', 'imports a module named at run time', lineOf(at));
  }
  const name = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  if (ALLOWED_MODULES.has(name)) return undefined;
  return refuseCode('code.import_not_allowed', `imports ${excerpt(specifier)}`, lineOf(at));
}

/** Unwraps `a?.b` so the member inside is judged like `a.b`. */
function unchain(node: unknown): unknown {
  return isNode(node) && node.type === 'ChainExpression' ? node.expression : node;
}

/**
 * The rule one node breaks, judged with its parent (an identifier is a reference unless it is a
 * member name, a property key or a label), or undefined.
 */
function judge(node: AnyNode, parent: AnyNode | undefined, key: string): CodeVerdict | undefined {
  switch (node.type) {
    case 'WithStatement':
      return refuseCode('code.dynamic_scope', 'uses a with statement', lineOf(node));
    case 'ImportDeclaration':
    case 'ExportAllDeclaration':
    case 'ExportNamedDeclaration':
      return node.source ? moduleRule(constantString(node.source), node) : undefined;
    case 'ImportExpression':
      return moduleRule(constantString(node.source), node);
    case 'MemberExpression': {
      const object = unchain(node.object);
      const name = node.computed ? constantString(node.property) : (node.property as AnyNode).name;
      const rootName = isNode(object) && object.type === 'Identifier' ? String(object.name) : '';
      if (typeof name === 'string' && DANGEROUS_MEMBERS.has(name)) {
        return refuseCode('code.dynamic_eval', `reads the member ${excerpt(name)}`, lineOf(node));
      }
      // The global object can be had without naming it (`this` in a sloppy function): its
      // evaluating and networking members are refused on whatever object they are read.
      if (typeof name === 'string' && (EVAL_GLOBALS.has(name) || name === 'Reflect')) {
        return refuseCode('code.dynamic_eval', `reads the member ${excerpt(name)}`, lineOf(node));
      }
      if (typeof name === 'string' && NETWORK_GLOBALS.has(name)) {
        return refuseCode('code.network', `reads the member ${excerpt(name)}`, lineOf(node));
      }
      if (DANGEROUS_ROOTS.has(rootName)) {
        if (node.computed) {
          return refuseCode(
            'code.computed_access',
            `reads a computed member of ${rootName}`,
            lineOf(node),
          );
        }
        if (typeof name === 'string' && ROOT_MEMBERS[rootName]?.has(name)) return undefined;
        return refuseCode(
          'code.dangerous_global',
          `reads ${rootName}.${excerpt(String(name)).slice(1, -1)}`,
          lineOf(node),
        );
      }
      return undefined;
    }
    case 'CallExpression':
    case 'NewExpression': {
      const callee = unchain(node.callee);
      const args = node.arguments as AnyNode[];
      if (isNode(callee) && callee.type === 'Identifier' && callee.name === 'require') {
        return moduleRule(args.length === 1 ? constantString(args[0]) : undefined, node);
      }
      // Which function `obj[key]()` calls is decided at run time; the guard cannot read it.
      if (
        isNode(callee) &&
        callee.type === 'MemberExpression' &&
        callee.computed &&
        constantString(callee.property) === undefined
      ) {
        return refuseCode(
          'code.computed_access',
          'calls a member chosen at run time',
          lineOf(node),
        );
      }
      return undefined;
    }
    case 'Identifier':
      return judgeIdentifier(node, parent, key);
    default:
      return undefined;
  }
}

function judgeIdentifier(
  node: AnyNode,
  parent: AnyNode | undefined,
  key: string,
): CodeVerdict | undefined {
  if (parent !== undefined && !isReference(parent, key)) return undefined;
  const name = String(node.name);
  if (EVAL_GLOBALS.has(name)) {
    return refuseCode('code.dynamic_eval', `uses ${name}`, lineOf(node));
  }
  if (NETWORK_GLOBALS.has(name)) {
    return refuseCode('code.network', `uses ${name}`, lineOf(node));
  }
  if (name === 'require') {
    const calledDirectly =
      parent !== undefined &&
      (parent.type === 'CallExpression' || parent.type === 'NewExpression') &&
      key === 'callee';
    return calledDirectly
      ? undefined
      : refuseCode('code.dynamic_import', 'uses require other than to call it', lineOf(node));
  }
  if (DANGEROUS_ROOTS.has(name)) {
    const asObject = parent?.type === 'MemberExpression' && key === 'object';
    return asObject ? undefined : refuseCode('code.dangerous_global', `uses ${name}`, lineOf(node));
  }
  return undefined;
}

/** False for identifiers that name something other than a binding: member names, keys, labels. */
function isReference(parent: AnyNode, key: string): boolean {
  switch (parent.type) {
    case 'MemberExpression':
      return key !== 'property' || parent.computed === true;
    case 'Property':
    case 'PropertyDefinition':
    case 'MethodDefinition':
      return key !== 'key' || parent.computed === true;
    case 'LabeledStatement':
    case 'BreakStatement':
    case 'ContinueStatement':
      return key !== 'label';
    case 'MetaProperty':
      return false;
    case 'ImportSpecifier':
    case 'ExportSpecifier':
      return key === 'local';
    default:
      return true;
  }
}

function parseEither(code: string): Node {
  const options = { ecmaVersion: 'latest', locations: true, allowHashBang: true } as const;
  try {
    return parse(code, { ...options, sourceType: 'module' });
  } catch {
    // CommonJS code and function bodies (`return` or `await` at the top, `with`, legacy octal)
    // parse only as a script.
    return parse(code, {
      ...options,
      sourceType: 'script',
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
    });
  }
}

/**
 * Checks JavaScript `code`: the first rule it breaks, or allowed. Never throws; code that does
 * not parse (as a module or as a script) is refused, `code.syntax`. The walk is iterative, so a
 * deep tree acorn accepted cannot overflow the stack here.
 */
export function checkJavaScript(code: string): CodeVerdict {
  let tree: Node;
  try {
    tree = parseEither(code);
  } catch (error) {
    const line = (error as { loc?: { line?: number } }).loc?.line;
    return refuseCode('code.syntax', 'is not valid JavaScript', line);
  }
  const stack: [AnyNode, AnyNode | undefined, string][] = [[tree as AnyNode, undefined, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, parent, key] = next;
    const verdict = judge(node, parent, key);
    if (verdict !== undefined) return verdict;
    for (const [childKey, value] of Object.entries(node)) {
      if (childKey === 'loc') continue;
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) {
          const child: unknown = value[i];
          if (isNode(child)) stack.push([child, node, childKey]);
        }
      } else if (isNode(value)) {
        stack.push([value, node, childKey]);
      }
    }
  }
  return { ok: true, value: { language: 'javascript' } };
}
