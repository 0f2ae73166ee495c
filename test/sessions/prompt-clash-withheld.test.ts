/**
 * Two prompts of a session's set whose names differ only in case are neither listed, and the
 * session's withheld list says why (attack round 10, F8; docs/tools-and-catalog.md, "Names the
 * model sees": "prompts alike"), beside the benign neighbour, a prompt of its own name, which is
 * not withheld. Pure: the names a session's set is offered under (export-names.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolVersionDetail } from '../../src/domain/catalog/index.js';
import { exportNames } from '../../src/domain/sessions/export-names.js';

function prompt(id: string, name: string): ToolVersionDetail {
  return {
    id,
    version: '1.0.0',
    name: id.replaceAll('.', '_'),
    lifecycle: 'active',
    definition: {
      runtime: { kind: 'mcp', provider: id.split('.')[0], entry: { kind: 'prompt', name } },
    },
  } as unknown as ToolVersionDetail;
}

test('prompts differing only in case are withheld with the reason; another prompt is not', () => {
  const { withheld } = exportNames([
    prompt('up.prompt.greet2-aaaaaaaa', 'Greet2'),
    prompt('zz.prompt.greet2-bbbbbbbb', 'greet2'),
    prompt('zz.prompt.farewell-cccccccc', 'farewell'),
  ]);
  assert.deepEqual(withheld.map((w) => w.id).sort(), [
    'up.prompt.greet2-aaaaaaaa',
    'zz.prompt.greet2-bbbbbbbb',
  ]);
  for (const w of withheld) assert.match(w.reason, /differ only in case/);
});
