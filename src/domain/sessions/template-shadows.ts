/**
 * @module Which resource templates no URI can be read through because other listed templates
 * cover them (docs/security-model.md "Resources and templates: one URI, one governed thing";
 * INVARIANTS 6). A URI two different templates match names nothing (governed-uris.ts), whatever
 * their providers or states, so a template every URI of which another template also matches
 * (`notes://topics/{topic}` beside `notes://{kind}/{name}`) can never be read: it is not offered,
 * rather than listed and refused. Decided over the templates as the resolver matches them (the
 * SDK's RFC 6570 regular expressions), as automata over characters: a template stays offered only
 * when a URI is found that it matches and no other template can (and the resolver, asked, reads
 * that URI through it); where that cannot be shown within the bounds, and another template may
 * share a URI with it, it is shadowed. Pure but for a small memo.
 */
import type { Store } from '../../records/store/index.js';
import { type GovernedUriEntry, readGovernedEntries, resolveGovernedUri } from './governed-uris.js';

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
/** What a value may be made of in the URIs a template surely matches: it encodes to itself. */
const SAFE = `${ALNUM}-_~`;
/** Past this many states one search is not decided (and the answer is the cautious one). */
const MAX_STATES = 4096;
/**
 * Character steps one computation over all templates may take (an upstream may list a thousand
 * templates); past it every question left is not decided, and the answer is the cautious one.
 */
const MAX_WORK = 10_000_000;
let work = 0;

function accepts(item: Item, c: string): boolean {
  return item.kind === 'lit' ? item.ch === c : item.chars.includes(c);
}

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
 * The template as items. `over`: every URI the resolver reads through it, and more (the SDK's
 * expression for it, each value's text within what its encoding writes: COMPONENT, or RESERVED
 * for `{+x}` and `{#x}`). `under`: only URIs it matches that also expand back to themselves, the
 * values made of SAFE characters (and `/` for `{+x}`). Null for a template that matches nothing,
 * and for `under` where that set is empty or not known (an expression whose expansion is not its
 * match: `{#x}`, a second `{?x}`, `{.x,y}`, `{}`).
 */
function items(source: string, mode: 'over' | 'under'): Item[] | null {
  // A template the SDK cannot parse matches nothing.
  const parts = parse(source);
  if (parts === null) return null;
  const out: Item[] = [];
  const value = (reserved: boolean): Item => ({
    kind: 'set',
    chars: mode === 'under' ? `${SAFE}${reserved ? '/' : ''}` : reserved ? RESERVED : COMPONENT,
  });
  let query = false;
  for (const part of parts) {
    if (typeof part === 'string') {
      out.push(...chars(part));
      continue;
    }
    const { operator, names } = part;
    if (operator === '?' || operator === '&') {
      if (mode === 'under' && operator === '?' && query) return null;
      names.forEach((name, i) => {
        out.push(...chars(`${i === 0 ? operator : '&'}${name}=`), value(false));
      });
      query = true;
      continue;
    }
    if (mode === 'under' && (names.length === 0 || operator === '#')) return null;
    if (mode === 'under' && names.length > 1 && (operator === '.' || operator === '/')) return null;
    if (operator === '.' || operator === '/') out.push({ kind: 'lit', ch: operator });
    out.push(value(operator === '+' || operator === '#'));
  }
  return out;
}

/**
 * Templates as one automaton: a slot per position of each (its start to its end), the item read
 * from a slot onwards, and the set item a slot may repeat.
 */
class Automaton {
  readonly starts: number[] = [];
  readonly #next: (Item | undefined)[] = [];
  readonly #loop: (Item | undefined)[] = [];
  readonly #end: number[] = [];

  constructor(templates: readonly (readonly Item[])[]) {
    templates.forEach((its, i) => {
      this.starts.push(this.#next.length);
      for (let j = 0; j <= its.length; j += 1) {
        const prev = its[j - 1];
        this.#next.push(its[j]);
        this.#loop.push(prev?.kind === 'set' ? prev : undefined);
        this.#end.push(j === its.length ? i : -1);
      }
    });
  }

  step(at: readonly number[], c: string): number[] {
    const out = new Set<number>();
    for (const g of at) {
      const next = this.#next[g];
      if (next !== undefined && accepts(next, c)) out.add(g + 1);
      const loop = this.#loop[g];
      if (loop !== undefined && accepts(loop, c)) out.add(g);
    }
    return [...out].sort((x, y) => x - y);
  }

  /** The templates whose end is among `at`, by index (those that match what was read). */
  ends(at: readonly number[]): number[] {
    return at.map((g) => this.#end[g] ?? -1).filter((i) => i >= 0);
  }
}

/**
 * One character of each kind the items tell apart: every literal, and one per combination of the
 * sets holding it. Every other character moves no automaton.
 */
function alphabet(all: readonly (readonly Item[])[]): string[] {
  const lits = new Set<string>();
  const sets = new Set<string>();
  for (const its of all)
    for (const it of its)
      (it.kind === 'lit' ? lits : sets).add(it.kind === 'lit' ? it.ch : it.chars);
  const out = [...lits];
  const kinds = new Set<string>();
  for (const chars of sets) {
    for (const c of chars) {
      const kind = [...sets].map((x) => (x.includes(c) ? '1' : '0')).join('');
      if (lits.has(c) || kinds.has(kind)) continue;
      kinds.add(kind);
      out.push(c);
    }
  }
  return out;
}

/**
 * Breadth first over `t` beside `others`: the first URI `t` matches and none of `others` does
 * (`want: 'outside'`), or that `t` and some other match (`'shared'`); null when there is none,
 * undefined when the search ran past a bound.
 */
function search(
  t: readonly Item[],
  others: readonly (readonly Item[])[],
  want: 'outside' | 'shared',
): string | null | undefined {
  if (work > MAX_WORK) return undefined;
  const mine = new Automaton([t]);
  const theirs = new Automaton(others);
  const chars = alphabet([t, ...others]);
  type State = { readonly t: number[]; readonly o: number[]; readonly uri: string };
  const queue: State[] = [{ t: [0], o: theirs.starts, uri: '' }];
  const seen = new Set([`0|${theirs.starts}`]);
  for (let head = 0; head < queue.length; head += 1) {
    const s = queue[head] as State;
    work += chars.length * (s.t.length + s.o.length);
    if (work > MAX_WORK) return undefined;
    if (s.t.includes(t.length)) {
      const shared = theirs.ends(s.o).length > 0;
      if (want === (shared ? 'shared' : 'outside')) return s.uri;
    }
    for (const c of chars) {
      const nt = mine.step(s.t, c);
      if (nt.length === 0) continue;
      const next: State = { t: nt, o: theirs.step(s.o, c), uri: s.uri + c };
      const k = `${next.t}|${next.o}`;
      if (seen.has(k)) continue;
      if (seen.size >= MAX_STATES) return undefined;
      seen.add(k);
      queue.push(next);
    }
  }
  return null;
}

/** The literal text a template starts with (before its first expression). */
function prefixOf(source: string): string {
  const at = source.indexOf('{');
  return at < 0 ? source : source.slice(0, at);
}

/** Whether two templates' literal starts let one URI begin with both. */
function prefixesMeet(a: string, b: string): boolean {
  const pa = prefixOf(a);
  const pb = prefixOf(b);
  return pa.startsWith(pb) || pb.startsWith(pa);
}

/** A template shadowed, and the other templates that may share its URIs, by catalog id. */
export interface TemplateShadow {
  readonly template: string;
  readonly by: readonly GovernedUriEntry[];
}

/**
 * The templates among `candidates` (each matching something) that may share a URI with `key`
 * when they leave it none of its own, or null when it has one that the resolver reads through it
 * (or shares none). Where that is not decided (a bound, a URI the resolver does not read as it),
 * it is taken as shadowed.
 */
function coveredBy(
  key: string,
  candidates: readonly string[],
  over: ReadonlyMap<string, Item[] | null>,
  templates: readonly GovernedUriEntry[],
): string[] | null {
  const under = items(key, 'under');
  if (under !== null) {
    const others = candidates.map((k) => over.get(k) ?? []);
    const uri = search(under, others, 'outside');
    if (typeof uri === 'string') {
      const self = templates.find((e) => e.key === key);
      const rivals = templates.filter((e) => candidates.includes(e.key));
      const read = self && resolveGovernedUri(uri, [self, ...rivals]);
      if (read && read.id === self.id) return null;
    }
  }
  const mine = over.get(key) ?? [];
  const sharing = candidates.filter((k) => search(mine, [over.get(k) ?? []], 'shared') !== null);
  return sharing.length > 0 ? sharing : null;
}

/** The shadowed templates among `entries` (listed ones only: a removed one matches nothing). */
function compute(entries: readonly GovernedUriEntry[]): Map<string, TemplateShadow> {
  work = 0;
  const templates = entries.filter((e) => e.kind === 'resource_template' && e.listed);
  const keys = [...new Set(templates.map((e) => e.key))];
  const over = new Map(keys.map((k) => [k, items(k, 'over')] as const));
  const shadowedKeys = new Map<string, string[]>();
  for (const key of keys) {
    if (!over.get(key)) continue;
    // Identical templates of several providers are copies, never each other's shadow.
    const candidates = keys.filter((k) => k !== key && over.get(k) && prefixesMeet(key, k));
    if (candidates.length === 0) continue;
    const by = coveredBy(key, candidates, over, templates);
    if (by !== null) shadowedKeys.set(key, by);
  }
  const out = new Map<string, TemplateShadow>();
  for (const e of templates) {
    const by = shadowedKeys.get(e.key);
    if (by === undefined) continue;
    out.set(e.id, { template: e.key, by: templates.filter((o) => by.includes(o.key)) });
  }
  return out;
}

let memo: { readonly key: string; readonly value: Map<string, TemplateShadow> } | null = null;

/**
 * The templates of `entries` (every provider's, whatever its state) that no URI can be read
 * through because other listed templates match every URI they match, by catalog id, each with
 * those templates. Copies (one URI template listed by several providers) are not each other's.
 */
export function shadowedTemplates(
  entries: readonly GovernedUriEntry[],
): ReadonlyMap<string, TemplateShadow> {
  const listed = entries
    .filter((e) => e.kind === 'resource_template' && e.listed)
    .map((e) => `${e.id}\u0000${e.key}`)
    .sort()
    .join('\u0001');
  if (memo?.key !== listed) memo = { key: listed, value: compute(entries) };
  return memo.value;
}

/** The provider a catalog id of an upstream entry belongs to. */
export function providerOf(id: string): string {
  return id.split('.')[0] ?? id;
}

/** Why a shadowed template is not offered (the session's withheld list). */
export function shadowReason(shadow: TemplateShadow): string {
  const by = shadow.by.map((e) => `"${e.key}" (provider ${providerOf(e.id)})`).join(', ');
  return `every URI of the resource template "${shadow.template}" may also match ${by}, and a URI two templates match reads neither; it is not offered`;
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
