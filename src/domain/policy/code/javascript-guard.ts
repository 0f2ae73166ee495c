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
import {
  type AnyNode,
  constantString,
  harmlessBindings,
  isNode,
  type KeyKind,
  keyKind,
} from './javascript-keys.js';

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
  // The built-ins' prototypes are shared with whatever else runs in the same realm (the tool's
  // own harness): changing them reaches code the guard never read.
  'prototype',
  // A sloppy caller or callee is a function the code was not given; V8's stack-trace hooks hand
  // out call sites whose getThis/getFunction reach the global object and the caller's functions.
  'caller',
  'callee',
  'prepareStackTrace',
  'getThis',
  'getFunction',
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

/**
 * Members that read or change an object's prototype, or define properties behind an assignment's
 * back: `Object.getPrototypeOf({})` is `Object.prototype` without the word `prototype`, and
 * `defineProperty`/`setPrototypeOf` change a built-in the tool's own harness shares. Refused
 * wherever they are read (`code.reflection`), on `Object` as on any other object.
 */
const PROTOTYPE_MEMBERS = new Set([
  'getPrototypeOf',
  'setPrototypeOf',
  'defineProperty',
  'defineProperties',
]);

/**
 * The only member names that may be read on a value reached through a key the guard could not
 * prove harmless (`groups[k].push(x)`, `m[k].length`). That value may be any property of any
 * object (`o['constructor']` is `Object`, `a['__proto__']` is `Array.prototype`), so a name is
 * listed only when, on every built-in it could be, it reads data or does nothing beyond the
 * value itself: not `assign`, `create`, `call`, `apply`, `bind`, `defineProperty`, `keys`.
 */
const OPAQUE_MEMBERS = new Set([
  'length',
  'push',
  'concat',
  'join',
  'slice',
  'includes',
  'indexOf',
  'lastIndexOf',
  'at',
  'toFixed',
  'toPrecision',
  'toString',
  'toLocaleString',
  'trim',
  'trimStart',
  'trimEnd',
  'toUpperCase',
  'toLowerCase',
  'split',
  'startsWith',
  'endsWith',
  'padStart',
  'padEnd',
  'charAt',
  'size',
]);

/**
 * Members refused wherever they are read except as the callee of `Object.<name>(…)` itself,
 * where the name the descriptor is read under is judged (`const { getOwnPropertyDescriptor: d }
 * = Object` would hide it).
 */
const DESCRIPTOR_READERS = new Set(['getOwnPropertyDescriptor', 'getOwnPropertyDescriptors']);

/**
 * Every name a key built at run time must be proven unable to reach: the refused members, and
 * the refused globals (the global object is refused, but a key is judged on any object).
 */
const REFUSED_KEYS: ReadonlySet<string> = new Set([
  ...DANGEROUS_MEMBERS,
  ...EVAL_GLOBALS,
  ...NETWORK_GLOBALS,
  ...DANGEROUS_ROOTS,
  'require',
  'Reflect',
  'arguments',
  ...DESCRIPTOR_READERS,
  ...PROTOTYPE_MEMBERS,
]);

/**
 * `Object` functions that hand back the values of properties not named in the code: every
 * descriptor (the non-enumerable `constructor` among them), or every own value of a function.
 */
const OBJECT_VALUE_READERS = new Set(['values', 'entries']);

/** What the walk knows about the whole program while it judges one node. */
interface Context {
  /** Each node's parent and the field of the parent it sits in. */
  readonly parents: WeakMap<AnyNode, readonly [AnyNode, string]>;
  /** Names bound only to harmless keys (javascript-keys.ts). */
  readonly harmless: ReadonlySet<string>;
  /** Names bound to functions or classes (a declaration, or a const initialised with one). */
  readonly functions: ReadonlySet<string>;
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
function judge(
  node: AnyNode,
  parent: AnyNode | undefined,
  key: string,
  context: Context,
): CodeVerdict | undefined {
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
      const direct =
        typeof name === 'string' &&
        DESCRIPTOR_READERS.has(name) &&
        isDirectObjectCall(node, rootName, parent, key);
      const named =
        typeof name === 'string' && !direct
          ? memberNameRule(name, 'reads the member', node)
          : undefined;
      if (named !== undefined) return named;
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
      if (node.computed && name === undefined) return judgeComputedRead(node, context);
      return undefined;
    }
    case 'ObjectPattern':
      return judgePattern(node, context);
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
      return judgeObjectReflection(callee, args, node, context);
    }
    case 'Identifier':
      return judgeIdentifier(node, parent, key);
    case 'Property':
      // `{ __proto__: p }` sets the new object's prototype, whatever p is.
      if (parent?.type === 'ObjectExpression' && !node.computed && !node.shorthand) {
        const k = node.key as AnyNode;
        const name = k.type === 'Identifier' ? String(k.name) : constantString(k);
        if (name === '__proto__') {
          return refuseCode('code.dynamic_eval', 'sets a prototype with __proto__', lineOf(node));
        }
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * The rule a member name breaks wherever it is read: as `a.name`, `a['name']`, or a pattern key
 * `{ name: x } = a`. The global object can be had without naming it, so its evaluating and
 * networking members are refused on whatever object they are read.
 */
function memberNameRule(name: string, what: string, at: AnyNode): CodeVerdict | undefined {
  if (PROTOTYPE_MEMBERS.has(name)) {
    return refuseCode(
      'code.reflection',
      `${what} ${excerpt(name)} (it reads or changes a prototype)`,
      lineOf(at),
    );
  }
  if (DESCRIPTOR_READERS.has(name)) {
    return refuseCode(
      'code.reflection',
      `${what} ${excerpt(name)} other than to call it on Object`,
      lineOf(at),
    );
  }
  if (DANGEROUS_MEMBERS.has(name) || EVAL_GLOBALS.has(name) || name === 'Reflect') {
    return refuseCode('code.dynamic_eval', `${what} ${excerpt(name)}`, lineOf(at));
  }
  if (NETWORK_GLOBALS.has(name)) {
    return refuseCode('code.network', `${what} ${excerpt(name)}`, lineOf(at));
  }
  return undefined;
}

/** `Object.getOwnPropertyDescriptor(…)` itself: judged by judgeObjectReflection. */
function isDirectObjectCall(
  member: AnyNode,
  rootName: string,
  parent: AnyNode | undefined,
  key: string,
): boolean {
  return (
    rootName === 'Object' &&
    member.computed !== true &&
    key === 'callee' &&
    parent?.type === 'CallExpression'
  );
}

function keyOf(node: unknown, context: Context): KeyKind {
  return keyKind(node, REFUSED_KEYS, context.harmless);
}

/** The refusal for a key the guard could not prove harmless (`what` says where it was used). */
function unknownKey(kind: KeyKind, what: string, at: AnyNode): CodeVerdict {
  const may = kind.kind === 'unknown' && kind.mayBe ? ` (it may build ${excerpt(kind.mayBe)})` : '';
  return refuseCode('code.computed_access', `${what}${may}`, lineOf(at));
}

/**
 * `obj[key]` with a key the guard cannot compute: allowed when the key is proven harmless (a
 * number, a name bound only to harmless values, a concatenation that cannot build a refused
 * name), or when what it reads is only ever used as data (see usedAsData); refused otherwise,
 * since a value read under an unknown name may be the Function constructor.
 */
function judgeComputedRead(node: AnyNode, context: Context): CodeVerdict | undefined {
  const kind = keyOf(node.property, context);
  if (kind.kind === 'harmless') return undefined;
  if (kind.kind === 'named') return memberNameRule(kind.name, 'reads the member', node);
  if (usedAsData(node, context)) return undefined;
  return unknownKey(kind, 'reads a member chosen at run time and passes it on', node);
}

/**
 * True when the value of `node` can only be combined into a primitive, tested, compared or
 * thrown away, or is the place written to: never called, never read further, never bound to a
 * name, passed, returned or stored. Follows `a || b`, `c ? a : b`, `(x, a)` and `await a` up,
 * since their value may be `a` itself.
 */
function usedAsData(start: AnyNode, context: Context): boolean {
  let node = start;
  for (;;) {
    const up = context.parents.get(node);
    if (up === undefined) return true;
    const [parent, key] = up;
    switch (parent.type) {
      case 'BinaryExpression':
      case 'UnaryExpression':
      case 'UpdateExpression':
      case 'ExpressionStatement':
      case 'IfStatement':
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'SwitchStatement':
      case 'SwitchCase':
      case 'ForStatement':
      case 'ForInStatement':
      case 'ArrayPattern':
      case 'RestElement':
        return true;
      case 'ForOfStatement':
      case 'AssignmentPattern':
        // The place written to; iterating the value, or defaulting to it, passes it on.
        return key === 'left';
      case 'TemplateLiteral': {
        const above = context.parents.get(parent);
        return above?.[0].type !== 'TaggedTemplateExpression';
      }
      case 'AssignmentExpression': {
        const op = String(parent.operator);
        const logical = op === '||=' || op === '&&=' || op === '??=';
        if (key === 'left' && !logical) return true;
        if (key === 'right' && op !== '=' && !logical) return true;
        if (key === 'right') return false;
        node = parent;
        continue;
      }
      case 'MemberExpression':
        // As a key it is only turned into a string (the outer read is judged on its own).
        if (key === 'property') return true;
        return namedReadOfOpaque(parent, context);
      case 'Property': {
        // A computed key is turned into a string; a pattern's value is the place written to.
        const above = context.parents.get(parent);
        return key === 'key' || above?.[0].type === 'ObjectPattern';
      }
      case 'ConditionalExpression':
        if (key === 'test') return true;
        node = parent;
        continue;
      case 'SequenceExpression': {
        const expressions = parent.expressions as AnyNode[];
        if (expressions[expressions.length - 1] !== node) return true;
        node = parent;
        continue;
      }
      case 'LogicalExpression':
      case 'ChainExpression':
      case 'AwaitExpression':
      case 'ParenthesizedExpression':
        node = parent;
        continue;
      default:
        return false;
    }
  }
}

/**
 * `opaque.name` or `opaque[0]` (grouping: `groups[key].push(x)`): one more read, under a number or
 * a name of OPAQUE_MEMBERS. Whatever an unknown key reached (a constructor, a prototype, a
 * method), `o[k].assign(…)` with k = `constructor` is `Object.assign`, so only names harmless on
 * every built-in pass; and writing through it (`({})[k].x = 1` with k = `__proto__`) would change
 * a built-in prototype, so a write is refused.
 */
function namedReadOfOpaque(member: AnyNode, context: Context): boolean {
  const name = member.computed
    ? constantString(member.property)
    : String((member.property as AnyNode).name);
  if (name === undefined) {
    if (keyOf(member.property, context).kind !== 'harmless') return false;
  } else if (!/^(0|[1-9][0-9]*)$/.test(name) && !OPAQUE_MEMBERS.has(name)) {
    return false;
  }
  const up = context.parents.get(member);
  if (up === undefined) return true;
  const [parent, key] = up;
  const written =
    (parent.type === 'AssignmentExpression' && key === 'left') ||
    parent.type === 'UpdateExpression' ||
    (parent.type === 'UnaryExpression' && parent.operator === 'delete') ||
    parent.type === 'ArrayPattern' ||
    parent.type === 'RestElement' ||
    (parent.type === 'AssignmentPattern' && key === 'left') ||
    ((parent.type === 'ForOfStatement' || parent.type === 'ForInStatement') && key === 'left') ||
    (parent.type === 'Property' && context.parents.get(parent)?.[0].type === 'ObjectPattern');
  return !written;
}

/**
 * `{ key: x } = value` reads `value.key`, wherever the pattern stands (a declaration, a parameter,
 * a catch clause, a for…of head, an assignment, nested in another pattern): its keys are judged
 * as member names, and a computed key the guard cannot prove harmless is refused (what it reads
 * is bound to a name).
 */
function judgePattern(node: AnyNode, context: Context): CodeVerdict | undefined {
  for (const property of node.properties as AnyNode[]) {
    if (property.type !== 'Property') continue;
    const keyNode = property.key as AnyNode;
    const name = property.computed
      ? constantString(keyNode)
      : keyNode.type === 'Identifier'
        ? String(keyNode.name)
        : constantString(keyNode);
    if (name !== undefined) {
      const refused = memberNameRule(name, 'destructures the member', property);
      if (refused !== undefined) return refused;
      continue;
    }
    const kind = keyOf(keyNode, context);
    if (kind.kind === 'named')
      return memberNameRule(kind.name, 'destructures the member', property);
    if (kind.kind === 'unknown') {
      return unknownKey(kind, 'destructures a member chosen at run time', property);
    }
  }
  return undefined;
}

/**
 * Reflection through `Object`: a descriptor read under a name (`getOwnPropertyDescriptor(f,
 * 'constructor')`) is a member read and judged like one; every descriptor at once, or every
 * value of a function, hands back members the code never names, and is refused.
 */
function judgeObjectReflection(
  callee: unknown,
  args: readonly AnyNode[],
  at: AnyNode,
  context: Context,
): CodeVerdict | undefined {
  if (!isNode(callee) || callee.type !== 'MemberExpression' || callee.computed) return undefined;
  const object = unchain(callee.object);
  if (!isNode(object) || object.type !== 'Identifier' || object.name !== 'Object') return undefined;
  const method = String((callee.property as AnyNode).name);
  if (method === 'getOwnPropertyDescriptors') {
    return refuseCode(
      'code.reflection',
      'reads every property descriptor of an object',
      lineOf(at),
    );
  }
  if (method === 'getOwnPropertyDescriptor') {
    const kind = keyOf(args[1], context);
    if (kind.kind === 'named') return memberNameRule(kind.name, 'reads the descriptor of', at);
    if (kind.kind === 'unknown') {
      return unknownKey(kind, 'reads the descriptor of a member chosen at run time', at);
    }
    return undefined;
  }
  if (OBJECT_VALUE_READERS.has(method) && isFunctionValue(args[0], context.functions)) {
    return refuseCode(
      'code.reflection',
      `reads every value of a function (Object.${method})`,
      lineOf(at),
    );
  }
  return undefined;
}

/** True for a function or class written in place, or a name the code binds to one. */
function isFunctionValue(node: unknown, functions: ReadonlySet<string>): boolean {
  if (!isNode(node)) return false;
  switch (node.type) {
    case 'FunctionExpression':
    case 'ArrowFunctionExpression':
    case 'ClassExpression':
      return true;
    case 'Identifier':
      return functions.has(String(node.name));
    default:
      return false;
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
  // Outside a function `arguments` is the harness's own (in a CommonJS wrapper `arguments[1]` is
  // `require`); inside one it is an alias of the parameters. Refused everywhere, as a binding too.
  if (name === 'arguments') {
    return refuseCode('code.dangerous_global', 'uses arguments', lineOf(node));
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

/** Names the code binds to a function or class, to know what `Object.values(f)` reads. */
function functionBindings(tree: AnyNode): Set<string> {
  const names = new Set<string>();
  const stack: AnyNode[] = [tree];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (
      (node.type === 'FunctionDeclaration' || node.type === 'ClassDeclaration') &&
      isNode(node.id)
    ) {
      names.add(String(node.id.name));
    }
    if (node.type === 'VariableDeclarator' && isNode(node.id) && node.id.type === 'Identifier') {
      const init = node.init;
      if (isFunctionValue(init, names)) {
        names.add(String(node.id.name));
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc') continue;
      if (Array.isArray(value)) for (const child of value) isNode(child) && stack.push(child);
      else if (isNode(value)) stack.push(value);
    }
  }
  return names;
}

/**
 * `this` where it is not provably an instance or a class: in sloppy code (a script, a function
 * body the tool's harness builds with `new Function`) a function called without a receiver gets
 * the global object as `this`, and with it every global the guard refuses by name. Allowed only
 * inside a class element: a method's, getter's, setter's or constructor's body, a field's
 * initialiser, a static block (the class itself), and arrows and functions nested there (class
 * code is strict, so an unbound call's `this` is undefined). A class element's computed key and
 * the class heritage are evaluated in the enclosing scope, with the enclosing `this`
 * (`class { [(g = this, 'm')]() {} }` hands out the global object), so they inherit the
 * enclosing judgement. Judged after every other rule, so code that also names what it reaches is
 * refused for that.
 */
function judgeThis(node: AnyNode, insideClass: boolean): CodeVerdict | undefined {
  if (node.type === 'ThisExpression' && !insideClass) {
    return refuseCode(
      'code.dangerous_global',
      'uses this outside a class (it may be the global object)',
      lineOf(node),
    );
  }
  return undefined;
}

/**
 * True for the part of a class element whose `this` is an instance or the class: a method's
 * function, a field's initialiser, a static block's statements; never a key (see judgeThis).
 */
function isClassElementBody(node: AnyNode, childKey: string): boolean {
  switch (node.type) {
    case 'MethodDefinition':
    case 'PropertyDefinition':
      return childKey === 'value';
    case 'StaticBlock':
      return childKey === 'body';
    default:
      return false;
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
  const root = tree as AnyNode;
  const parents = new WeakMap<AnyNode, readonly [AnyNode, string]>();
  const context: Context = {
    parents,
    harmless: harmlessBindings(root, REFUSED_KEYS),
    functions: functionBindings(root),
  };
  let thisVerdict: CodeVerdict | undefined;
  const stack: [AnyNode, AnyNode | undefined, string, boolean][] = [[root, undefined, '', false]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, parent, key, insideClass] = next;
    const verdict = judge(node, parent, key, context);
    if (verdict !== undefined) return verdict;
    thisVerdict ??= judgeThis(node, insideClass);
    for (const [childKey, value] of Object.entries(node)) {
      if (childKey === 'loc') continue;
      const inside = insideClass || isClassElementBody(node, childKey);
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) {
          const child: unknown = value[i];
          if (isNode(child)) {
            parents.set(child, [node, childKey]);
            stack.push([child, node, childKey, inside]);
          }
        }
      } else if (isNode(value)) {
        parents.set(value, [node, childKey]);
        stack.push([value, node, childKey, inside]);
      }
    }
  }
  if (thisVerdict !== undefined) return thisVerdict;
  return { ok: true, value: { language: 'javascript' } };
}
