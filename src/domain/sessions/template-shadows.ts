/**
 * @module Which resource templates are not offered because another listed template may match a
 * URI they match (docs/security-model.md "Resources and templates: one URI, one governed thing";
 * INVARIANTS 6). A URI two different templates match names nothing (governed-uris.ts), whatever
 * their providers or states, so such a template's URIs are partly or wholly unreadable: any two
 * different templates that may share a URI are both withheld, each naming the other, rather than
 * listed and refused (attack round 10 F4). Decided over the templates as the resolver matches them
 * (the SDK's RFC 6570 regular expressions, each value's text within what its encoding writes), as
 * automata over characters, pair by pair: two templates share a URI when their product reaches
 * both ends. The work is bounded per pair and per computation (an upstream's listing must never
 * hold the event loop: attack round 10 F2); a pair not decided within the bounds counts as
 * sharing. Decided pairs are remembered, so a later computation goes on where one stopped.
 */
import type { Store } from '../../records/store/index.js';
import { type GovernedUriEntry, readGovernedEntries } from './governed-uris.js';

/** One position of a template's expression: a literal character, or one or more of a set. */
type Item =
  | { readonly kind: 'lit'; readonly ch: string }
  | { readonly kind: 'set'; readonly chars: string };

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/**
 * What a value's text may hold in a URI that expands back to itself: what `encodeURIComponent`
 * leaves as it is and the escapes it writes (a template's `{x}`, `{.x}`, `{/x}`, `{?x}`), and
 * what `encodeURI` leaves too (`{+x}`, `{#x}`). The resolver reads no other URI through them.
 */
const COMPONENT = `${ALNUM}-_.!~*'()%`;
const RESERVED = `${COMPONENT};,/?:@&=+$#`;
/** Past this many product states one pair is not decided (and counts as sharing). */
const MAX_PAIR_STATES = 20_000;
/**
 * Product states (and pairs looked at) one computation over all templates may visit: measured at
 * 4–16 ms once compiled (up to ~45 ms the first time) on this project's two shared cores under a
 * load of 6 (attack round 10 F2). Past it every pair left is not decided, and counts as sharing.
 */
const MAX_WORK = 20_000;
/** Keys and pairs remembered: past either, that memory starts afresh. */
const MAX_CACHED_KEYS = 20_000;
const MAX_CACHED_PAIRS = 500_000;

interface Expression {
  readonly operator: string;
  readonly names: readonly string[];
}

/** The SDK's reading of a template (UriTemplate.parse), or null where it throws. */
function parse(source: string): (string | Expression)[] | null {
  const parts: (string | Expression)[] = [];
  let text = '';
  for (let i = 0; i < source.length; i += 1) {
    if (source[i] !== '{') {
      text += source[i];
      continue;
    }
    if (text) parts.push(text);
    text = '';
    const end = source.indexOf('}', i);
    if (end < 0) return null;
    const expr = source.slice(i + 1, end);
    const operator = ['+', '#', '.', '/', '?', '&'].find((op) => expr.startsWith(op)) ?? '';
    const names = expr
      .slice(operator.length)
      .split(',')
      .map((n) => n.replace('*', '').trim())
      .filter((n) => n.length > 0);
    parts.push({ operator, names });
    i = end;
  }
  if (text) parts.push(text);
  return parts;
}

/** Literal text as items, one per UTF-16 unit (the SDK's expressions carry no `u` flag). */
const chars = (s: string): Item[] => s.split('').map((ch) => ({ kind: 'lit', ch }));

/**
 * The template as items: every URI the resolver reads through it, and more (the SDK's expression
 * for it, each value's text within what its encoding writes: COMPONENT, or RESERVED for `{+x}`
 * and `{#x}`). Null for a template the SDK cannot parse, which matches nothing.
 */
function items(source: string): Item[] | null {
  const parts = parse(source);
  if (parts === null) return null;
  const out: Item[] = [];
  const value = (reserved: boolean): Item => ({
    kind: 'set',
    chars: reserved ? RESERVED : COMPONENT,
  });
  for (const part of parts) {
    if (typeof part === 'string') {
      out.push(...chars(part));
      continue;
    }
    const { operator, names } = part;
    if (operator === '?' || operator === '&') {
      names.forEach((name, i) => {
        out.push(...chars(`${i === 0 ? operator : '&'}${name}=`), value(false));
      });
      continue;
    }
    if (operator === '.' || operator === '/') out.push({ kind: 'lit', ch: operator });
    out.push(value(operator === '+' || operator === '#'));
  }
  return out;
}

/** Whether one character passes both items (every two sets here share ALNUM). */
function meet(x: Item, y: Item): boolean {
  if (x.kind === 'lit') return y.kind === 'lit' ? x.ch === y.ch : y.chars.includes(x.ch);
  return y.kind === 'lit' ? x.chars.includes(y.ch) : true;
}

type PairAnswer = 'shared' | 'disjoint' | 'undecided';

/** What one computation may still spend, and whether it ran out. */
interface Budget {
  left: number;
  exhausted: boolean;
}

/**
 * Whether some URI matches both `a` and `b`: a search over the pairs of their positions (no
 * subsets: the product of two automata without choices to remember), at most MAX_PAIR_STATES of
 * them and within the budget. From position `g` a template moves on by its next item (to
 * `g + 1`), or stays by repeating the set item just read.
 */
function share(a: readonly Item[], b: readonly Item[], budget: Budget): PairAnswer {
  const width = b.length + 1;
  const seen = new Set<number>([0]);
  const stack = [0];
  const visit = (x: Item | undefined, ni: number, y: Item | undefined, nj: number): boolean => {
    if (x === undefined || y === undefined || !meet(x, y)) return true;
    const next = ni * width + nj;
    if (seen.has(next)) return true;
    if (seen.size >= MAX_PAIR_STATES) return false;
    seen.add(next);
    stack.push(next);
    return true;
  };
  while (stack.length > 0) {
    const at = stack.pop() as number;
    const i = Math.floor(at / width);
    const j = at - i * width;
    if (i === a.length && j === b.length) return 'shared';
    budget.left -= 1;
    if (budget.left < 0) {
      budget.exhausted = true;
      return 'undecided';
    }
    const an = a[i];
    const al = a[i - 1]?.kind === 'set' ? a[i - 1] : undefined;
    const bn = b[j];
    const bl = b[j - 1]?.kind === 'set' ? b[j - 1] : undefined;
    const fits =
      visit(an, i + 1, bn, j + 1) &&
      visit(an, i + 1, bl, j) &&
      visit(al, i, bn, j + 1) &&
      visit(al, i, bl, j);
    if (!fits) return 'undecided';
  }
  return 'disjoint';
}

/** The literal text a template starts with (before its first expression). */
function prefixOf(source: string): string {
  const at = source.indexOf('{');
  return at < 0 ? source : source.slice(0, at);
}

/** A template withheld, and the other templates that may share a URI with it. */
export interface TemplateShadow {
  readonly template: string;
  readonly by: readonly GovernedUriEntry[];
  /** True when some of `by` were not decided within the bounds (counted as sharing). */
  readonly undecided: boolean;
}

/** Keys as small numbers, and the answers of the pairs already decided (they never change). */
const numbers = new Map<string, number>();
const pairs = new Map<number, PairAnswer>();

/** A key's number (the pairs' memory starts afresh with the numbers). */
function numberOf(key: string): number {
  let n = numbers.get(key);
  if (n === undefined) {
    if (numbers.size >= MAX_CACHED_KEYS) {
      numbers.clear();
      pairs.clear();
    }
    n = numbers.size;
    numbers.set(key, n);
  }
  return n;
}

/** The answer for two different keys: remembered, else searched within the budget. */
function pairAnswer(a: Keyed, b: Keyed, budget: Budget): PairAnswer {
  const key = Math.min(a.n, b.n) * 2 ** 26 + Math.max(a.n, b.n);
  const known = pairs.get(key);
  if (known !== undefined) return known;
  // Each pair looked at costs a step, so a listing of many templates spends the budget too.
  budget.left -= 1;
  if (budget.left < 0) budget.exhausted = true;
  if (budget.exhausted) return 'undecided';
  const answer = share(a.items, b.items, budget);
  // Out of the computation's budget is not an answer for the pair: a later one goes on.
  if (budget.exhausted) return answer;
  if (pairs.size >= MAX_CACHED_PAIRS) pairs.clear();
  pairs.set(key, answer);
  return answer;
}

/** A listed template key with its number, literal start and items. */
interface Keyed {
  readonly key: string;
  readonly n: number;
  readonly prefix: string;
  readonly items: readonly Item[];
}

/** The withheld templates among `entries` (listed ones only: a removed one matches nothing). */
function compute(entries: readonly GovernedUriEntry[]): {
  readonly shadows: Map<string, TemplateShadow>;
  readonly complete: boolean;
} {
  const templates = entries.filter((e) => e.kind === 'resource_template' && e.listed);
  const byKey = new Map<string, GovernedUriEntry[]>();
  for (const e of templates) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);
  // Identical templates of several providers are copies (one key), never each other's.
  const keyed: Keyed[] = [];
  for (const key of byKey.keys()) {
    const its = items(key);
    if (its !== null) keyed.push({ key, n: numberOf(key), prefix: prefixOf(key), items: its });
  }
  const budget: Budget = { left: MAX_WORK, exhausted: false };
  // Per key, its partners' indices and whether some pair of it was not decided.
  const partners: number[][] = keyed.map(() => []);
  const undecided = new Uint8Array(keyed.length);
  keyed.forEach((a, i) => {
    for (let j = i + 1; j < keyed.length; j += 1) {
      const b = keyed[j] as Keyed;
      if (!(a.prefix.startsWith(b.prefix) || b.prefix.startsWith(a.prefix))) continue;
      const answer = pairAnswer(a, b, budget);
      if (answer === 'disjoint') continue;
      partners[i]?.push(j);
      partners[j]?.push(i);
      if (answer === 'undecided') {
        undecided[i] = 1;
        undecided[j] = 1;
      }
    }
  });
  const out = new Map<string, TemplateShadow>();
  keyed.forEach((k, i) => {
    const with_ = partners[i] ?? [];
    if (with_.length === 0) return;
    const by = with_.flatMap((j) => byKey.get(keyed[j]?.key ?? '') ?? []);
    for (const e of byKey.get(k.key) ?? []) {
      out.set(e.id, { template: k.key, by, undecided: undecided[i] === 1 });
    }
  });
  return { shadows: out, complete: !budget.exhausted };
}

let memo: { readonly key: string; readonly value: Map<string, TemplateShadow> } | null = null;

/**
 * The templates of `entries` (every provider's, whatever its state) that another listed template
 * may share a URI with, by catalog id, each with those templates. Copies (one URI template listed
 * by several providers) are not each other's. A computation that ran out of its budget is not
 * kept: the next one goes on from the pairs it decided.
 */
export function shadowedTemplates(
  entries: readonly GovernedUriEntry[],
): ReadonlyMap<string, TemplateShadow> {
  const listed = entries
    .filter((e) => e.kind === 'resource_template' && e.listed)
    .map((e) => `${e.id}\u0000${e.key}`)
    .sort()
    .join('\u0001');
  if (memo?.key === listed) return memo.value;
  const { shadows, complete } = compute(entries);
  memo = complete ? { key: listed, value: shadows } : null;
  return shadows;
}

/** The provider a catalog id of an upstream entry belongs to. */
export function providerOf(id: string): string {
  return id.split('.')[0] ?? id;
}

/** Templates named in a reason or an alert, at most. */
const MAX_NAMED = 5;

/** Why a withheld template is not offered (the session's withheld list). */
export function shadowReason(shadow: TemplateShadow): string {
  const named = shadow.by.slice(0, MAX_NAMED);
  const more = shadow.by.length - named.length;
  const by =
    named.map((e) => `"${e.key}" (provider ${providerOf(e.id)})`).join(', ') +
    (more > 0 ? ` and ${more} more` : '');
  const undecided = shadow.undecided
    ? ' (not decided within the bounds, so counted as shared)'
    : '';
  return `URIs of the resource template "${shadow.template}" may also match ${by}${undecided}, and a URI two different templates match reads neither; it is not offered`;
}

/**
 * Why each shadowed template is not offered, by catalog id, over every provider's templates as
 * the store holds them now (what a permitted set is computed with: export-names.ts).
 */
export async function shadowedTemplateReasons(
  db: Store['db'],
): Promise<ReadonlyMap<string, string>> {
  const shadows = shadowedTemplates(await readGovernedEntries(db));
  return new Map([...shadows].map(([id, s]) => [id, shadowReason(s)]));
}
