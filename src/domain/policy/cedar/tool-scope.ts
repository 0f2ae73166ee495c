/**
 * @module Which tools a forbid policy could possibly match, read from its JSON form, so the gate can
 * skip the WASM call for tools no policy can touch. Must never answer "cannot match" for a policy
 * that could deny (match, or fail to evaluate) on some request to that tool.
 */
import type { EntityUidJson, Expr, PatternElem, PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { CEDAR_TYPES } from './cedar-schema.js';

/** What appliesTo is asked about: the tool facts fixed at definition time. */
export interface ToolFacts {
  readonly id: string;
  readonly action_class: string;
  readonly tags: readonly string[];
}

/** A forbid's reach: `false` only when no request to this tool can match it or make it fail. */
export type ToolScope = (tool: ToolFacts) => boolean;

/** yes / no hold only if evaluation does not fail; `err` says whether it might. */
type Truth = 'yes' | 'no' | 'maybe';
interface Verdict {
  readonly t: Truth;
  readonly err: boolean;
}

const MAYBE_SAFE: Verdict = { t: 'maybe', err: false };
const MAYBE_RISKY: Verdict = { t: 'maybe', err: true };

function known(value: boolean): Verdict {
  return { t: value ? 'yes' : 'no', err: false };
}

/** The operators of Cedar's JSON expression form; any other key is an extension function call. */
const BUILTIN_OPERATORS = new Set([
  'Value',
  'Var',
  'Slot',
  '!',
  'neg',
  '==',
  '!=',
  'in',
  '<',
  '<=',
  '>',
  '>=',
  '&&',
  '||',
  '+',
  '-',
  '*',
  'contains',
  'containsAll',
  'containsAny',
  'isEmpty',
  'getTag',
  'hasTag',
  '.',
  'has',
  'like',
  'is',
  'if-then-else',
  'Set',
  'Record',
]);

/**
 * Compiles the resource scope and conditions of one forbid into a predicate over tool facts.
 * Cedar evaluates the scope before the conditions and the conditions in order, with `&&`/`||`
 * short-circuiting, so a clause that is certainly false for a tool hides any failure after it.
 */
export function compileToolScope(policy: PolicyJson): ToolScope {
  return (tool) => {
    const scope = resourceConstraint(policy, tool);
    if (scope === 'no') return false;
    let sawRisk = false;
    for (const clause of policy.conditions) {
      const v = analyse(clause.body, tool);
      const t = clause.kind === 'when' ? v.t : flip(v.t);
      if (t === 'no' && !sawRisk && !v.err) return false;
      sawRisk ||= v.err;
    }
    return true;
  };
}

function flip(t: Truth): Truth {
  return t === 'yes' ? 'no' : t === 'no' ? 'yes' : 'maybe';
}

function resourceConstraint(policy: PolicyJson, tool: ToolFacts): Truth {
  const r = policy.resource;
  switch (r.op) {
    case 'All':
      return 'yes';
    case '==':
    case 'in':
      // A Tool has no parents in the schema, so `resource in Tool::"x"` means `== Tool::"x"`.
      return 'entity' in r ? toolIdIs(r.entity, tool) : 'maybe';
    case 'is':
      if (r.entity_type !== CEDAR_TYPES.tool) return 'maybe';
      if (r.in === undefined) return 'yes';
      return 'entity' in r.in ? toolIdIs(r.in.entity, tool) : 'maybe';
    default:
      return 'maybe';
  }
}

function uidOf(value: unknown): { type: string; id: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const inner = '__entity' in value ? (value as { __entity: unknown }).__entity : value;
  if (typeof inner !== 'object' || inner === null) return undefined;
  const { type, id } = inner as { type?: unknown; id?: unknown };
  return typeof type === 'string' && typeof id === 'string' ? { type, id } : undefined;
}

function toolIdIs(entity: EntityUidJson | unknown, tool: ToolFacts): Truth {
  const uid = uidOf(entity);
  if (uid === undefined || uid.type !== CEDAR_TYPES.tool) return 'maybe';
  return uid.id === tool.id ? 'yes' : 'no';
}

function isVar(e: Expr, name: string): boolean {
  return 'Var' in e && (e as { Var: unknown }).Var === name;
}

/** The tool fact an expression denotes when it is `resource.id`, `resource.action_class`… */
function resourceAttr(e: Expr): string | undefined {
  if (!('.' in e)) return undefined;
  const dot = (e as { '.': { left: Expr; attr: string } })['.'];
  return isVar(dot.left, 'resource') ? dot.attr : undefined;
}

function stringFact(e: Expr, tool: ToolFacts): string | undefined {
  const attr = resourceAttr(e);
  if (attr === 'id') return tool.id;
  if (attr === 'action_class') return tool.action_class;
  return undefined;
}

function literal(e: Expr): unknown {
  return 'Value' in e ? (e as { Value: unknown }).Value : undefined;
}

function stringLiteral(e: Expr): string | undefined {
  const v = literal(e);
  return typeof v === 'string' ? v : undefined;
}

/** The elements of a set literal when every one is a string literal. */
function stringSet(e: Expr): string[] | undefined {
  const elements = setElements(e);
  if (elements === undefined) return undefined;
  const out: string[] = [];
  for (const el of elements) {
    const s = stringLiteral(el);
    if (s === undefined) return undefined;
    out.push(s);
  }
  return out;
}

function setElements(e: Expr): Expr[] | undefined {
  if ('Set' in e) return (e as { Set: Expr[] }).Set;
  const v = literal(e);
  return Array.isArray(v) ? v.map((x) => ({ Value: x }) as Expr) : undefined;
}

type Binary = { left: Expr; right: Expr };

function binary(e: Expr, op: string): Binary | undefined {
  return op in e ? (e as Record<string, Binary>)[op] : undefined;
}

/** Three-valued reading of an expression for one tool; anything not understood is `maybe`. */
function analyse(e: Expr, tool: ToolFacts): Verdict {
  const and = binary(e, '&&');
  if (and !== undefined) {
    const l = analyse(and.left, tool);
    if (l.t === 'no') return l;
    const r = analyse(and.right, tool);
    const t: Truth = l.t === 'yes' ? r.t : r.t === 'no' ? 'no' : 'maybe';
    return { t, err: l.err || r.err };
  }
  const or = binary(e, '||');
  if (or !== undefined) {
    const l = analyse(or.left, tool);
    if (l.t === 'yes') return l;
    const r = analyse(or.right, tool);
    const t: Truth = l.t === 'no' ? r.t : r.t === 'yes' ? 'yes' : 'maybe';
    return { t, err: l.err || r.err };
  }
  if ('!' in e) {
    const v = analyse((e as { '!': { arg: Expr } })['!'].arg, tool);
    return { t: flip(v.t), err: v.err };
  }
  if ('if-then-else' in e) {
    const ite = (e as { 'if-then-else': { if: Expr; then: Expr; else: Expr } })['if-then-else'];
    const c = analyse(ite.if, tool);
    const a = analyse(ite.then, tool);
    const b = analyse(ite.else, tool);
    if (c.t === 'yes') return { t: a.t, err: c.err || a.err };
    if (c.t === 'no') return { t: b.t, err: c.err || b.err };
    return { t: a.t === b.t ? a.t : 'maybe', err: c.err || a.err || b.err };
  }
  if ('Value' in e) {
    const v = literal(e);
    if (typeof v === 'boolean') return known(v);
  }
  const atom = toolAtom(e, tool);
  if (atom !== undefined) return known(atom);
  return mayFail(e) ? MAYBE_RISKY : MAYBE_SAFE;
}

/** The value of a comparison fully decided by the tool's id, action class or tags, if it is one. */
function toolAtom(e: Expr, tool: ToolFacts): boolean | undefined {
  for (const op of ['==', '!='] as const) {
    const b = binary(e, op);
    if (b === undefined) continue;
    const eq = equalsForTool(b.left, b.right, tool) ?? equalsForTool(b.right, b.left, tool);
    if (eq === undefined) return undefined;
    return op === '==' ? eq : !eq;
  }
  const inOp = binary(e, 'in');
  if (inOp !== undefined && isVar(inOp.left, 'resource')) {
    const single = uidOf(literal(inOp.right));
    if (single !== undefined)
      return single.type === CEDAR_TYPES.tool ? single.id === tool.id : undefined;
    const elements = setElements(inOp.right);
    if (elements === undefined) return undefined;
    let any = false;
    for (const el of elements) {
      const uid = uidOf(literal(el));
      if (uid === undefined || uid.type !== CEDAR_TYPES.tool) return undefined;
      any ||= uid.id === tool.id;
    }
    return any;
  }
  const contains = binary(e, 'contains');
  if (contains !== undefined) {
    if (resourceAttr(contains.left) === 'tags') {
      const tag = stringLiteral(contains.right);
      return tag === undefined ? undefined : tool.tags.includes(tag);
    }
    const fact = stringFact(contains.right, tool);
    const set = stringSet(contains.left);
    return fact === undefined || set === undefined ? undefined : set.includes(fact);
  }
  for (const op of ['containsAny', 'containsAll'] as const) {
    const b = binary(e, op);
    if (b === undefined || resourceAttr(b.left) !== 'tags') continue;
    const set = stringSet(b.right);
    if (set === undefined) return undefined;
    return op === 'containsAny'
      ? set.some((t) => tool.tags.includes(t))
      : set.every((t) => tool.tags.includes(t));
  }
  if ('like' in e) {
    const like = (e as { like: { left: Expr; pattern: PatternElem[] } }).like;
    const fact = stringFact(like.left, tool);
    return fact === undefined ? undefined : matchesPattern(fact, like.pattern);
  }
  if ('is' in e) {
    const is = (e as { is: { left: Expr; entity_type: string; in?: Expr } }).is;
    if (!isVar(is.left, 'resource') || is.in !== undefined) return undefined;
    return is.entity_type === CEDAR_TYPES.tool ? true : undefined;
  }
  return undefined;
}

function equalsForTool(a: Expr, b: Expr, tool: ToolFacts): boolean | undefined {
  if (isVar(a, 'resource')) {
    const uid = uidOf(literal(b));
    return uid !== undefined && uid.type === CEDAR_TYPES.tool ? uid.id === tool.id : undefined;
  }
  const fact = stringFact(a, tool);
  const other = stringLiteral(b);
  return fact === undefined || other === undefined ? undefined : fact === other;
}

/** Cedar `like`: `Wildcard` matches any run of characters (Unicode scalar values). */
export function matchesPattern(text: string, pattern: readonly PatternElem[]): boolean {
  const chars = Array.from(text);
  const elems: (string | null)[] = [];
  for (const p of pattern) {
    if (p === 'Wildcard') elems.push(null);
    else elems.push(...Array.from(p.Literal));
  }
  // Classic wildcard matching with one backtrack point.
  let c = 0;
  let p = 0;
  let starP = -1;
  let starC = 0;
  while (c < chars.length) {
    const el = elems[p];
    if (p < elems.length && el !== null && el === chars[c]) {
      c += 1;
      p += 1;
    } else if (p < elems.length && el === null) {
      starP = p;
      starC = c;
      p += 1;
    } else if (starP >= 0) {
      p = starP + 1;
      starC += 1;
      c = starC;
    } else {
      return false;
    }
  }
  while (p < elems.length && elems[p] === null) p += 1;
  return p === elems.length;
}

/**
 * Whether evaluating `e` might raise an error on a schema-valid request. After strict validation
 * only these can: integer overflow (`+ - *`, negation), extension functions, and reading an
 * attribute or tag of an entity named by a literal (it is not in the request's entities). Reading
 * through `principal`, `resource` or `context` cannot fail, because the validator demands a
 * `has`/`hasTag` guard wherever a value might be absent.
 */
function mayFail(e: Expr): boolean {
  for (const [op, body] of Object.entries(e)) {
    if (!BUILTIN_OPERATORS.has(op)) return true;
    switch (op) {
      case '+':
      case '-':
      case '*':
      case 'neg':
        return true;
      case '.':
      case 'getTag':
        if (!rootedAtVariable((body as { left: Expr }).left)) return true;
        break;
      default:
        break;
    }
    if (childExprs(op, body).some(mayFail)) return true;
  }
  return false;
}

function rootedAtVariable(e: Expr): boolean {
  if ('Var' in e) return true;
  if ('.' in e) return rootedAtVariable((e as { '.': { left: Expr } })['.'].left);
  return false;
}

function childExprs(op: string, body: unknown): Expr[] {
  switch (op) {
    case 'Value':
    case 'Var':
    case 'Slot':
      return [];
    case 'Set':
      return body as Expr[];
    case 'Record':
      return Object.values(body as Record<string, Expr>);
    case '!':
    case 'neg':
    case 'isEmpty':
      return [(body as { arg: Expr }).arg];
    case '.':
    case 'has':
    case 'like':
      return [(body as { left: Expr }).left];
    case 'is': {
      const is = body as { left: Expr; in?: Expr };
      return is.in === undefined ? [is.left] : [is.left, is.in];
    }
    case 'if-then-else': {
      const ite = body as { if: Expr; then: Expr; else: Expr };
      return [ite.if, ite.then, ite.else];
    }
    default: {
      if (Array.isArray(body)) return body as Expr[];
      const b = body as Binary;
      return [b.left, b.right];
    }
  }
}
