/**
 * The scan pool (docs/architecture.md §8, C3, "Bulk registration"): a bulk apply scans its
 * definitions on worker threads before its transaction, and registration takes those verdicts.
 * They must be exactly the verdicts of the scan on the registering thread, for every poisoned and
 * clean entry of the labelled corpus; an apply of many tools quarantines exactly the poisoned
 * ones; a definition the pool did not see is scanned as before; the bundled command carries the
 * worker beside main.js, and that worker answers.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { loadSplit } from '../../bench/scan-corpus.js';
import type { Actor } from '../../src/core/index.js';
import {
  prescanDefinitions,
  scanDefinition,
  scanInputOf,
} from '../../src/domain/catalog/definition-scan.js';
import { scanInParallel } from '../../src/domain/catalog/scan-pool.js';
import type { ToolDefinition } from '../../src/domain/catalog/tool-definition.js';
import { scanToolText } from '../../src/domain/catalog/tool-text-scan.js';
import { checkToolDefinition } from '../../src/domain/catalog/validate-definition.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { ensureBuilt, ROOT } from '../support/cli.js';
import { validTool } from '../support/tools.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const corpus = loadSplit('train.json') ?? [];

/** A checked definition per corpus entry: its own name where that is a valid tool name. */
function corpusDefinitions(): { definition: ToolDefinition; poisoned: boolean }[] {
  return corpus.flatMap((entry, i) => {
    const named = checkToolDefinition(
      validTool({
        id: `corpus.entry_${i}`,
        name: entry.name,
        description: entry.description,
        ...(entry.docHosts ? { doc_hosts: [...entry.docHosts] } : {}),
      }),
    );
    const checked = named.ok
      ? named
      : checkToolDefinition(
          validTool({
            id: `corpus.entry_${i}`,
            name: `entry_${i}`,
            description: entry.description,
          }),
        );
    return checked.ok
      ? [{ definition: checked.definition, poisoned: entry.label === 'poisoned' }]
      : [];
  });
}

describe('the scan pool', () => {
  test('its verdict on every corpus entry is the registering thread’s, finding for finding', async () => {
    const defs = corpusDefinitions();
    assert.ok(defs.length >= 400, `${defs.length} corpus definitions`);
    const inputs = defs.map((d) => scanInputOf(d.definition));
    const pooled = await Promise.all(scanInParallel(inputs, { minimum: 1 }));
    assert.equal(pooled.length, inputs.length);
    let flagged = 0;
    inputs.forEach((input, i) => {
      const verdict = pooled[i];
      assert.ok(verdict, `entry ${i} was scanned by a worker`);
      assert.deepEqual(verdict, scanToolText(input), `entry ${i}`);
      if (verdict.length > 0) flagged += 1;
    });
    // The corpus is mostly poisoned: the comparison covers findings, not only empty verdicts.
    assert.ok(flagged >= defs.filter((d) => d.poisoned).length * 0.9, `${flagged} flagged`);
  });

  test('a few definitions are left to the registering thread; so is one the pool never saw', async () => {
    const [one] = corpusDefinitions();
    assert.ok(one);
    assert.deepEqual(await Promise.all(scanInParallel([scanInputOf(one.definition)])), [null]);
    // Prescanned, then taken once: a second registration of the same object scans again.
    prescanDefinitions([one.definition], { minimum: 1 });
    const first = await scanDefinition(one.definition);
    assert.deepEqual(first, scanToolText(scanInputOf(one.definition)));
    assert.deepEqual(await scanDefinition(one.definition), first);
  });

  describe('a bulk apply', () => {
    const gateways: Gateway[] = [];
    after(async () => {
      for (const g of gateways) await g.close();
    });

    test('quarantines exactly the poisoned tools among 200, and registers the rest', async () => {
      const g = await openGateway({ db: 'sqlite::memory:' });
      gateways.push(g);
      const poisonedText = corpus.filter((e) => e.label === 'poisoned' && e.lang === 'en');
      assert.ok(poisonedText.length >= 10);
      const docs = Array.from({ length: 200 }, (_, i) => {
        const poison = i % 20 === 7 ? poisonedText[i % poisonedText.length] : undefined;
        return {
          kind: 'Tool',
          spec: validTool({
            id: `bulk.tool_${i}`,
            name: `bulk_tool_${i}`,
            description: poison
              ? poison.description
              : `Return the status and amount of invoice batch ${i}.`,
          }),
        };
      });
      await g.config.apply(docs, admin);
      const tools = await g.catalog.list();
      const quarantined = tools.filter((t) => t.quarantined).map((t) => t.id);
      const expected = docs
        .map((d, i) => (i % 20 === 7 ? (d.spec.id as string) : null))
        .filter((id) => id !== null);
      assert.equal(tools.filter((t) => t.id.startsWith('bulk.')).length, 200);
      assert.deepEqual(quarantined.sort(), expected.sort());
    });
  });

  test('the bundled command carries the scan worker beside main.js, and it answers', async () => {
    ensureBuilt();
    const file = join(ROOT, 'dist', 'edge', 'cli', 'scan-worker.js');
    assert.ok(existsSync(file), 'dist/edge/cli/scan-worker.js');
    const [one] = corpusDefinitions().filter((d) => d.poisoned);
    assert.ok(one);
    const input = scanInputOf(one.definition);
    const worker = new Worker(file);
    try {
      const reply = await new Promise<{ id: number; findings: unknown }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage({ id: 1, inputs: [input] });
      });
      assert.equal(reply.id, 1);
      assert.deepEqual(reply.findings, [scanToolText(input)]);
    } finally {
      await worker.terminate();
    }
  });
});
