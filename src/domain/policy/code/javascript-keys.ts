/**
 * @module What the JavaScript guard can prove about a property key without running anything:
 * its constant value, that it is a number, that it is a name bound only to such values, or that
 * no refused name can come out of it. Everything else is unknown, and an unknown key is refused
 * wherever what it reads could be used (C9: the guard lists what is allowed).
 */
import type { Node } from 'acorn';

export interface AnyNode extends Node {
  readonly [key: string]: unknown;
}

export function isNode(value: unknown): value is AnyNode {
  return typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
}

/** What a key can be: harmless, a refused name (or a pattern that may build one), or unknown. */
export type KeyKind =
  | { readonly kind: 'harmless' }
  | { readonly kind: 'named'; readonly name: string }
  | { readonly kind: 'unknown'; readonly mayBe?: string };

const HARMLESS: KeyKind = { kind: 'harmless' };
const UNKNOWN: KeyKind = { kind: 'unknown' };

/** Operators whose result is always a number or a BigInt, whatever their operands are. */
const NUMERIC_BINARY = new Set(['-', '*', '/', '%', '**', '|', '&', '^', '<<', '>>', '>>>']);
const NUMERIC_UNARY = new Set(['-', '+', '~']);

/** The value of a key the guard can compute without running anything, or undefined. */
export function constantString(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  if (node.type === 'Literal') {
    if ('regex' in node && node.regex !== undefined) return undefined;
    if ('bigint' in node && typeof node.bigint === 'string') return node.bigint;
    const v = node.value;
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null
      ? String(v)
      : undefined;
  }
  if (node.type === 'TemplateLiteral') {
    const quasis = node.quasis as AnyNode[];
    const expressions = node.expressions as AnyNode[];
    let text = '';
    for (const [i, quasi] of quasis.entries()) {
      const cooked = (quasi.value as { cooked?: string | null }).cooked;
      if (typeof cooked !== 'string') return undefined;
      text += cooked;
      if (i < expressions.length) {
        const part = constantString(expressions[i]);
        if (part === undefined) return undefined;
        text += part;
      }
    }
    return text;
  }
  if (node.type === 'BinaryExpression' && node.operator === '+') {
    const left = constantString(node.left);
    const right = constantString(node.right);
    return left === undefined || right === undefined ? undefined : left + right;
  }
  return undefined;
}

/** True when the expression's value is a number or a BigInt, whatever its operands hold. */
function isNumeric(node: AnyNode): boolean {
  switch (node.type) {
    case 'Literal':
      return typeof node.value === 'number' || typeof node.bigint === 'string';
    case 'UpdateExpression':
      return true;
    case 'UnaryExpression':
      return NUMERIC_UNARY.has(String(node.operator));
    case 'BinaryExpression':
      if (NUMERIC_BINARY.has(String(node.operator))) return true;
      return (
        node.operator === '+' &&
        isNode(node.left) &&
        isNode(node.right) &&
        isNumeric(node.left) &&
        isNumeric(node.right)
      );
    default:
      return false;
  }
}

/**
 * The key as a sequence of constant pieces and holes (`null`), for a concatenation or template
 * literal whose pieces are partly unknown; undefined for anything else.
 */
function keyShape(node: AnyNode): (string | null)[] | undefined {
  const constant = constantString(node);
  if (constant !== undefined) return [constant];
  if (node.type === 'TemplateLiteral') {
    const quasis = node.quasis as AnyNode[];
    const shape: (string | null)[] = [];
    const expressions = node.expressions as AnyNode[];
    quasis.forEach((q, i) => {
      shape.push((q.value as { cooked?: string }).cooked ?? '');
      if (i < quasis.length - 1) shape.push(constantString(expressions[i]) ?? null);
    });
    return shape;
  }
  if (node.type === 'BinaryExpression' && node.operator === '+') {
    const left = isNode(node.left) ? keyShape(node.left) : undefined;
    const right = isNode(node.right) ? keyShape(node.right) : undefined;
    return [...(left ?? [null]), ...(right ?? [null])];
  }
  return undefined;
}

/** True when `name` could be what a shape of constant pieces and holes builds (a glob match). */
function shapeMatches(shape: readonly (string | null)[], name: string): boolean {
  // Adjacent constants join; the text between two holes is one segment.
  const segments: string[] = [''];
  for (const piece of shape) {
    if (piece === null) segments.push('');
    else segments[segments.length - 1] += piece;
  }
  const first = segments[0] ?? '';
  const last = segments[segments.length - 1] ?? '';
  if (segments.length === 1) return name === first;
  if (!name.startsWith(first) || name.length < first.length + last.length) return false;
  if (!name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const middle of segments.slice(1, -1)) {
    const found = name.indexOf(middle, at);
    if (found === -1 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/**
 * Judges a key expression. `refused` is every name a key must not reach; `harmlessNames` are
 * identifiers whose every binding and write is itself harmless (see harmlessBindings).
 */
export function keyKind(
  node: unknown,
  refused: ReadonlySet<string>,
  harmlessNames: ReadonlySet<string>,
): KeyKind {
  if (!isNode(node)) return UNKNOWN;
  const constant = constantString(node);
  if (constant !== undefined)
    return refused.has(constant) ? { kind: 'named', name: constant } : HARMLESS;
  if (isNumeric(node)) return HARMLESS;
  if (node.type === 'Identifier' && harmlessNames.has(String(node.name))) return HARMLESS;
  if (node.type === 'ConditionalExpression') {
    const a = keyKind(node.consequent, refused, harmlessNames);
    const b = keyKind(node.alternate, refused, harmlessNames);
    if (a.kind === 'named') return a;
    if (b.kind === 'named') return b;
    return a.kind === 'harmless' && b.kind === 'harmless' ? HARMLESS : UNKNOWN;
  }
  const shape = keyShape(node);
  if (shape === undefined) return UNKNOWN;
  for (const name of refused)
    if (shapeMatches(shape, name)) return { kind: 'unknown', mayBe: name };
  return HARMLESS;
}

/** Every identifier a pattern binds or assigns (`{a, b: [c, ...d]}` → a, c, d). */
function patternNames(node: unknown, out: Set<string>): void {
  if (!isNode(node)) return;
  switch (node.type) {
    case 'Identifier':
      out.add(String(node.name));
      return;
    case 'ObjectPattern':
      for (const p of node.properties as AnyNode[]) {
        patternNames(p.type === 'RestElement' ? p.argument : p.value, out);
      }
      return;
    case 'ArrayPattern':
      for (const e of node.elements as unknown[]) patternNames(e, out);
      return;
    case 'RestElement':
      patternNames(node.argument, out);
      return;
    case 'AssignmentPattern':
      patternNames(node.left, out);
      return;
    default:
      return;
  }
}

/**
 * The names whose every binding and every write anywhere in the program is a harmless key (a
 * number, a constant that is not refused, nothing): `let i = 0; … i++` is one, a parameter, a
 * loop variable of for…of or for…in, a catch binding, an import or a function is not. Judged
 * by name, not by scope, so a second binding of the same name anywhere spoils it: stricter, never
 * looser, than scope by scope.
 */
export function harmlessBindings(tree: AnyNode, refused: ReadonlySet<string>): Set<string> {
  const written = new Set<string>();
  const spoiled = new Set<string>();
  const none: ReadonlySet<string> = new Set();
  const harmlessValue = (value: unknown): boolean =>
    value === null || value === undefined || keyKind(value, refused, none).kind === 'harmless';
  const stack: AnyNode[] = [tree];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    switch (node.type) {
      case 'VariableDeclaration':
        for (const d of node.declarations as AnyNode[]) {
          const names = new Set<string>();
          patternNames(d.id, names);
          const simple = isNode(d.id) && d.id.type === 'Identifier';
          for (const n of names) {
            written.add(n);
            if (!simple || !harmlessValue(d.init)) spoiled.add(n);
          }
        }
        break;
      case 'ForInStatement':
      case 'ForOfStatement': {
        const names = new Set<string>();
        const left = node.left as AnyNode;
        if (left.type === 'VariableDeclaration') {
          for (const d of left.declarations as AnyNode[]) patternNames(d.id, names);
        } else {
          patternNames(left, names);
        }
        for (const n of names) spoiled.add(n);
        break;
      }
      case 'AssignmentExpression': {
        const names = new Set<string>();
        patternNames(node.left, names);
        const simple = isNode(node.left) && node.left.type === 'Identifier';
        const op = String(node.operator);
        const right = node.right;
        const ok =
          simple &&
          (op === '=' || op === '||=' || op === '&&=' || op === '??='
            ? harmlessValue(right)
            : op === '+='
              ? isNode(right) && isNumeric(right)
              : NUMERIC_BINARY.has(op.slice(0, -1)));
        for (const n of names) if (!ok) spoiled.add(n);
        break;
      }
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
      case 'ClassDeclaration':
      case 'ClassExpression': {
        const names = new Set<string>();
        if (isNode(node.id)) patternNames(node.id, names);
        for (const p of (node.params as unknown[] | undefined) ?? []) patternNames(p, names);
        for (const n of names) spoiled.add(n);
        break;
      }
      case 'CatchClause': {
        const names = new Set<string>();
        patternNames(node.param, names);
        for (const n of names) spoiled.add(n);
        break;
      }
      case 'ImportSpecifier':
      case 'ImportDefaultSpecifier':
      case 'ImportNamespaceSpecifier':
        spoiled.add(String((node.local as AnyNode).name));
        break;
      default:
        break;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc') continue;
      if (Array.isArray(value)) for (const child of value) isNode(child) && stack.push(child);
      else if (isNode(value)) stack.push(value);
    }
  }
  return new Set([...written].filter((n) => !spoiled.has(n)));
}
