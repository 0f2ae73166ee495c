/**
 * @module An upstream's resources, resource templates and prompts as toolgate pins them (C3,
 * C15): each reduced to its canonical definition (the fields a model or client is shown), pinned
 * by the SHA-256 of that definition's canonical JSON (RFC 8785), and listed whole over every page.
 * Only what the upstream advertises is asked for; nothing else of it is kept.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { canonicalJson, sha256Hex } from '../../core/index.js';

export type EntryKind = 'resource' | 'resource_template' | 'prompt';

export const ENTRY_KINDS: readonly EntryKind[] = ['resource', 'resource_template', 'prompt'];

export interface EntryArgument {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
}

/**
 * One listed entry's canonical definition. `key` is what the upstream knows it by: a resource's
 * `uri`, a template's `uriTemplate`, a prompt's `name`.
 */
export interface ListedEntry {
  readonly kind: EntryKind;
  readonly key: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly arguments?: readonly EntryArgument[];
}

/** Pages read of one list at most: an upstream that never ends its cursor is cut off. */
const MAX_PAGES = 100;
const METHOD_NOT_FOUND = -32601;

/** The pin of one entry: every field of its canonical definition, absent ones as null. */
export function entryPinOf(entry: ListedEntry): string {
  const pinned =
    entry.kind === 'prompt'
      ? {
          kind: entry.kind,
          name: entry.name,
          title: entry.title ?? null,
          description: entry.description ?? null,
          arguments: (entry.arguments ?? []).map((a) => ({
            name: a.name,
            description: a.description ?? null,
            required: a.required === true,
          })),
        }
      : {
          kind: entry.kind,
          [entry.kind === 'resource' ? 'uri' : 'uriTemplate']: entry.key,
          name: entry.name,
          title: entry.title ?? null,
          description: entry.description ?? null,
          mimeType: entry.mimeType ?? null,
        };
  return `sha256:${sha256Hex(canonicalJson(pinned))}`;
}

/** The key of an entry's pin beside the tools' pins (tool names never hold a NUL). */
export function entryPinKey(kind: EntryKind, key: string): string {
  return `${kind}\u0000${key}`;
}

export function isEntryPinKey(pinKey: string): boolean {
  return pinKey.includes('\u0000');
}

/** What a pin key pins, in a refusal's words: `tool`, `prompt`, `resource`, `resource template`. */
export function pinnedWhat(pinKey: string): string {
  if (!isEntryPinKey(pinKey)) return 'tool';
  const kind = pinKey.slice(0, pinKey.indexOf('\u0000'));
  return kind === 'resource_template' ? 'resource template' : kind;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function optional<K extends string>(key: K, value: unknown): Partial<Record<K, string>> {
  const t = text(value);
  return t !== undefined ? ({ [key]: t } as Record<K, string>) : {};
}

async function pages<T>(
  list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const listed = await list(cursor);
    out.push(...listed.items);
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  return out;
}

/** Every resource, resource template and prompt the connected upstream advertises. */
export async function listEntries(client: Client, timeoutMs: number): Promise<ListedEntry[]> {
  const caps = client.getServerCapabilities() ?? {};
  const options = { timeout: timeoutMs };
  const at = (cursor: string | undefined) => (cursor !== undefined ? { cursor } : {});
  const entries: ListedEntry[] = [];
  if (caps.resources) {
    const resources = await pages(async (c) => {
      const r = await client.listResources(at(c), options);
      return { items: r.resources, nextCursor: r.nextCursor };
    });
    for (const r of resources) {
      entries.push({
        kind: 'resource',
        key: r.uri,
        name: r.name,
        ...optional('title', r.title),
        ...optional('description', r.description),
        ...optional('mimeType', r.mimeType),
      });
    }
    // A server with resources but no templates may not know the method at all.
    const templates = await pages(async (c) => {
      const r = await client.listResourceTemplates(at(c), options);
      return { items: r.resourceTemplates, nextCursor: r.nextCursor };
    }).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === METHOD_NOT_FOUND) return [];
      throw err;
    });
    for (const t of templates) {
      entries.push({
        kind: 'resource_template',
        key: t.uriTemplate,
        name: t.name,
        ...optional('title', t.title),
        ...optional('description', t.description),
        ...optional('mimeType', t.mimeType),
      });
    }
  }
  if (caps.prompts) {
    const prompts = await pages(async (c) => {
      const r = await client.listPrompts(at(c), options);
      return { items: r.prompts, nextCursor: r.nextCursor };
    });
    for (const p of prompts) {
      entries.push({
        kind: 'prompt',
        key: p.name,
        name: p.name,
        ...optional('title', p.title),
        ...optional('description', p.description),
        arguments: (p.arguments ?? []).map((a) => ({
          name: a.name,
          ...optional('description', a.description),
          ...(a.required === true ? { required: true } : {}),
        })),
      });
    }
  }
  return entries;
}
