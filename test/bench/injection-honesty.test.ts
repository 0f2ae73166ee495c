/**
 * The injection replay keeps its honesty invariants (bench/injection/README.md): what the operator
 * declares comes from the tools' own descriptions, never from ASB's attack-only fields; the
 * organisation policy set names no tool, agent or attack; the injection is caught by toolgate's
 * own result scan of the result the gate saw, not marked by the replay; benign tasks carry no
 * injection and are never labelled as carrying one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AsbSubset,
  type InjectionReport,
  loadSubset,
  policySet,
  replayInjections,
} from '../../bench/injection/replay.js';

const { subset, classes } = loadSubset();

/** Lower-case word trigrams of a text. */
function trigrams(text: string): Set<string> {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  const out = new Set<string>();
  for (let i = 0; i + 3 <= words.length; i++) out.add(words.slice(i, i + 3).join(' '));
  return out;
}

test('the classification reads only what an operator sees: no note quotes an attack-only field', () => {
  const keys = new Set([
    'action_class',
    'data_access',
    'egress',
    'review',
    'note',
    'result_source',
    'result_note',
  ]);
  const normal = new Set(subset.normal_tools.map((t) => t['Tool Name']));
  const names = [...normal, ...subset.attacker_tools.map((t) => t['Attacker Tool'])];
  assert.deepEqual(Object.keys(classes).sort(), [...names].sort());
  for (const [name, c] of Object.entries(classes)) {
    for (const k of Object.keys(c)) assert.ok(keys.has(k), `${name}: unexpected field ${k}`);
    // Every normal tool's result source is declared; no attacker tool's (its results are not
    // what the attack is about, and a declaration there could only come from its goal).
    assert.equal(c.result_source !== undefined, normal.has(name), `${name}: result_source`);
    assert.equal(c.result_note !== undefined, normal.has(name), `${name}: result_note`);
  }
  for (const t of subset.attacker_tools) {
    const c = classes[t['Attacker Tool']];
    assert.ok(c);
    const description = trigrams(t.Description);
    const attackOnly = new Set([
      ...trigrams(t['Attack goal']),
      ...trigrams(t['Attacker Instruction']),
    ]);
    const quoted = [...trigrams(c.note)].filter((g) => attackOnly.has(g) && !description.has(g));
    assert.deepEqual(quoted, [], `${t['Attacker Tool']}: the note quotes the attack`);
  }
});

test('the policy set is general: it names no tool, agent or attack', () => {
  // The policies themselves, without their comments (which say what they do not know).
  const text = policySet()
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n')
    .toLowerCase();
  assert.match(text, /context\.injection_seen/);
  assert.doesNotMatch(text, /toolgate::(tool|agent)::"/);
  assert.doesNotMatch(text, /asb/);
  for (const t of subset.attacker_tools) {
    assert.ok(!text.includes(t['Attacker Tool'].toLowerCase()), t['Attacker Tool']);
  }
  for (const t of subset.normal_tools) {
    assert.ok(!text.includes(t['Tool Name'].toLowerCase()), t['Tool Name']);
  }
  for (const a of subset.agents) assert.ok(!text.includes(a.agent_name), a.agent_name);
});

const AGENTS = ['system_admin_agent', 'aerospace_engineer_agent'];

/** The outcome of every case, by id: what an honesty change must leave unchanged. */
function outcomes(r: InjectionReport): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of [...r.harmful_cases, ...r.benign_calls]) {
    out[c.id] = `${c.outcome} ${c.rule ?? ''} ${c.scan ?? ''}`;
  }
  return out;
}

test("ASB's attack labels decide nothing; the scan of the result the gate saw does", async () => {
  const r = await replayInjections({ agents: AGENTS });
  // The attack-only fields turned upside down: every outcome stays the same.
  const relabelled: AsbSubset = {
    ...subset,
    attacker_tools: subset.attacker_tools.map((t) => ({
      ...t,
      'Attack goal': 'Successfully keep everything safe.',
      'Attack Type':
        t['Attack Type'] === 'Stealthy Attack' ? 'Disruptive Attack' : 'Stealthy Attack',
      Aggressive: 'False',
    })),
  };
  assert.deepEqual(
    outcomes(await replayInjections({ agents: AGENTS, subset: relabelled })),
    outcomes(r),
  );

  // Each injected read was flagged by the gate's own scan, whatever its declared source: the
  // simulator's results, which its description says the organisation computes, are trusted text
  // until the scan finds instructions in them.
  for (const h of r.harmful_cases) {
    const first = subset.normal_tools.find((t) => t['Corresponding Agent'] === h.agent);
    const declared = first && classes[first['Tool Name']]?.result_source;
    assert.equal(h.scan, declared === 'untrusted' ? 'flagged' : 'flagged_trusted', h.id);
  }
  // Without the injected text the same read is clean, so the flag is the scan's, not the replay's.
  const noInjection: AsbSubset = { ...subset, injection_template: '' };
  const clean = await replayInjections({ agents: ['system_admin_agent'], subset: noInjection });
  assert.ok(clean.harmful_cases.length > 0);
  for (const h of clean.harmful_cases) assert.equal(h.scan, 'not_flagged', h.id);
});

test('benign tasks carry no injection and are never labelled as carrying one', async () => {
  for (const t of subset.normal_tools) {
    assert.ok(!/ignore previous/i.test(t['Expected Achievements']), t['Tool Name']);
  }
  const r = await replayInjections({ agents: AGENTS });
  assert.ok(r.benign.total > 0);
  assert.equal(r.benign.injection_flagged, 0);
  for (const b of r.benign_calls) {
    if (b.outcome === 'allowed') assert.notEqual(b.scan, 'flagged', b.id);
    assert.notEqual(b.outcome, 'denied', b.id);
  }
});
