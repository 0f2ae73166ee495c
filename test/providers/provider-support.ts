/**
 * @module Shared setup of the provider suites: the real npm MCP servers, run with node inside the
 * namespace sandbox with the project's node_modules bound read-only.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { ROOT } from '../support/cli.js';
import { classifyReviewed } from '../support/reviews.js';

export const NODE_MODULES = join(ROOT, 'node_modules');
export const EVERYTHING = join(
  NODE_MODULES,
  '@modelcontextprotocol/server-everything/dist/index.js',
);
export const FILESYSTEM = join(
  NODE_MODULES,
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);
export const FIXTURES = join(ROOT, 'test', 'fixtures', 'mcp');

/** A stdio provider spec for a node script, sandboxed with node_modules (and extra folders) read-only. */
export function nodeProvider(
  name: string,
  script: string,
  args: readonly string[] = [],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    owner: 'platform-team',
    transport: 'stdio',
    command: ['/usr/bin/node', script, ...args],
    isolation: 'namespace',
    binds: [{ source: NODE_MODULES }, ...((extra.binds as unknown[]) ?? [])],
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'binds')),
  };
}

/** A provider tool's classification: a public read, no egress, under `capabilities`. */
export function publicRead(capabilities: readonly string[], extra: Record<string, unknown> = {}) {
  return {
    action_class: 'read',
    data_access: 'public',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: capabilities,
    ...extra,
  };
}

export const READ_PUBLIC = publicRead(['everything:use']);

/**
 * A provider for one of the repo's fixture servers (test/fixtures/mcp), the fixtures and the
 * `folders` (where a test keeps the server's state) bound.
 */
export function fixtureProvider(
  name: string,
  script: string,
  args: readonly string[] = [],
  ...folders: string[]
): Record<string, unknown> {
  const binds = [FIXTURES, ...folders].map((source) => ({ source }));
  return nodeProvider(name, join(FIXTURES, script), args, { binds });
}

/** The agent of the notes fixture servers' suites, as `openWorld` takes it: `notes:read`. */
export const NOTES_BOT = {
  id: 'notes-bot',
  display_name: 'Notes agent',
  description: 'Reads notes.',
  owner: 'platform-team',
  capabilities: ['notes:read'],
};

/** Classifies `provider`'s `tool` as a public read (READ_PUBLIC, 15 s of wall time) and approves its review. */
export function classifyReadPublic(tg: Gateway, provider: string, tool: string, admin: Actor) {
  return classifyReviewed(tg, provider, tool, { ...READ_PUBLIC, wall_time_ms: 15_000 }, admin);
}

/** The text of a resource read's first content. */
export const textOf = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

/** Asserts an MCP read is refused with -32084 and returns the refusal's data code. */
export async function refusedWith(promise: Promise<unknown>, what: string): Promise<string> {
  let err: { code?: number; data?: { code?: string } } | undefined;
  try {
    const read = await promise;
    assert.fail(`${what} was answered: ${JSON.stringify(read)}`);
  } catch (caught) {
    if (caught instanceof assert.AssertionError) throw caught;
    err = caught as typeof err;
  }
  assert.equal(err?.code, -32084, what);
  return err?.data?.code ?? '';
}

/** The MCP error a request is refused with; fails with "`what` was not refused" if it is answered. */
export async function mcpRefusal(promise: Promise<unknown>, what: string): Promise<McpError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof McpError, String(err));
    return err;
  }
  assert.fail(`${what} was not refused`);
}
