/**
 * @module What a person deciding about a tool version reads besides its definition: the
 * description scan's findings (each in the text it was found in), provenance, code hash, egress
 * hosts and definition hash; and, for a four-eyes change, the full definition with what changed
 * against the version active now — every changed JSON path with its value before and after, and
 * the line diff of the canonical JSON (keys sorted, so only real changes show), unchanged runs
 * counted rather than shown. However large the definition, the changed paths are listed (attack
 * round 27 F1). Shared by the security review page and the change page; every value is text
 * through `html`.
 */
import {
  canonicalJson,
  type DiffRow,
  jsonDiff,
  lineDiff,
  MAX_DIFF_EDITS,
  MAX_DIFF_LINES,
  type PathChange,
  withContext,
} from '../../../core/index.js';
import type { ConsoleContext } from '../console-page.js';
import { type Html, html } from '../html.js';
import { fieldText, flaggedText } from './flagged-text.js';
import { jsonBlock } from './page-kit.js';

type Detail = Awaited<ReturnType<ConsoleContext['admin']['catalog']['get']>>;

/** Scan findings, provenance, code hash, egress hosts and hash of one stored version. */
export function toolFacts(tool: Detail): Html {
  const d = tool.definition;
  const hosts = d.egress.mode === 'constrained' ? d.egress.hosts : [];
  return html`<dl class="facts" id="tool-facts">
<dt>Provenance</dt><dd id="facts-provenance">${d.provenance}</dd>
<dt>Code hash</dt><dd id="facts-code-hash">${d.code_hash ? html`<code>${d.code_hash}</code>` : html`<span class="muted">none declared</span>`}</dd>
<dt>Egress</dt><dd id="facts-egress">${d.egress.mode}${hosts.length > 0 ? html`: ${hosts.map((h) => html`<code class="egress-host">${h}</code> `)}` : ''}</dd>
<dt>Definition hash</dt><dd><code>${tool.definition_hash}</code></dd>
<dt>Description scan</dt><dd id="facts-findings">${
    tool.findings.length === 0
      ? html`<span class="muted">no findings</span>`
      : html`<ul class="findings">${tool.findings.map(
          (f) =>
            html`<li class="finding"><code>${f.rule}</code> at <code>${f.field}</code>: ${f.message}<div class="flagged">${flaggedText(f, fieldText(d, f.field))}</div></li>`,
        )}</ul>`
  }</dd>
</dl>`;
}

/** A definition as reviewers compare it: canonical JSON (keys sorted), parsed back. */
function canonical(definition: unknown): unknown {
  return JSON.parse(canonicalJson(definition));
}

/**
 * A diff of up to WHOLE_DIFF_LINES lines is shown whole; a longer one shows DIFF_CONTEXT
 * unchanged lines either side of each change and counts the rest.
 */
const WHOLE_DIFF_LINES = 400;
const DIFF_CONTEXT = 3;
/** Characters of a value shown in the list of changed paths (the definition above is whole). */
const MAX_VALUE_CHARS = 300;

/**
 * What `version` is compared with: the version of `toolId` active now (the newest such), else the
 * newest other version whatever its state (the page names its state); null when there is none.
 */
async function activeVersion(
  ctx: ConsoleContext,
  toolId: string,
  version: string,
): Promise<Detail | null> {
  const others = (await ctx.admin.catalog.versions(toolId).catch(() => [])).filter(
    (v) => v.version !== version,
  );
  return others.filter((v) => v.lifecycle === 'active').at(-1) ?? others.at(-1) ?? null;
}

/** The full definition of `tool`, and what changed against the version active now. */
export async function definitionWithDiff(ctx: ConsoleContext, tool: Detail): Promise<Html> {
  const active = await activeVersion(ctx, tool.id, tool.version);
  const definition = canonical(tool.definition);
  const diff =
    active === null
      ? html`<p id="definition-diff" class="muted">No other version of <code>${tool.id}</code> exists: the whole definition is new.</p>`
      : diffBlock(active, canonical(active.definition), definition);
  return html`<h2>Definition</h2><div id="change-definition">${jsonBlock(definition)}</div>
<h2>Against the version in use</h2>${diff}`;
}

/** A value of the list of changed paths: its canonical JSON, cut past MAX_VALUE_CHARS. */
function valueText(value: unknown): Html {
  const text = canonicalJson(value);
  return text.length <= MAX_VALUE_CHARS
    ? html`<code>${text}</code>`
    : html`<code>${text.slice(0, MAX_VALUE_CHARS)}</code> <span class="muted">… (${text.length} characters in all)</span>`;
}

function pathRow(c: PathChange): Html {
  const absent = html`<span class="muted">absent</span>`;
  return html`<tr class="path-${c.op}" data-op="${c.op}"><td><code class="path">${c.path}</code>${c.repeated === undefined ? '' : html` <strong class="repeated">×${c.repeated}</strong>`}</td><td>${c.op === 'add' ? absent : valueText(c.before)}</td><td>${c.op === 'remove' ? absent : valueText(c.after)}</td></tr>`;
}

/** Every changed JSON path, before and after; past the listed ones, how many more. */
function pathTable(
  before: unknown,
  after: unknown,
): { count: number; complete: boolean; table: Html } {
  const { changes, total, unlistedBeyondProse } = jsonDiff(before, after);
  const more = total - changes.reduce((n, c) => n + (c.repeated ?? 1), 0);
  // Listed first: what changes behaviour; what is left out says whether it is only prose.
  const which =
    unlistedBeyondProse === 0
      ? 'all of them descriptions, titles or examples'
      : `${unlistedBeyondProse} of them more than descriptions, titles or examples: do not approve what you have not seen`;
  const table = html`<table id="definition-paths"><thead><tr><th>Path</th><th>Before</th><th>After</th></tr></thead><tbody>${changes.map(pathRow)}</tbody></table>${
    more > 0
      ? html`<p id="definition-paths-more" class="warn">${more} more changed path${more === 1 ? '' : 's'} not listed here (${which}); the definition above is whole.</p>`
      : ''
  }`;
  return { count: total, complete: more === 0, table };
}

function diffRow(row: DiffRow): Html {
  if (row.op === 'skip')
    return html`<span class="diff-skip">  ⋯ ${row.count} unchanged line${row.count === 1 ? '' : 's'}\n</span>`;
  const sign = { same: ' ', add: '+', remove: '-' } as const;
  return html`<span class="diff-${row.op}">${sign[row.op]} ${row.text}\n</span>`;
}

function diffBlock(active: Detail, before: unknown, after: unknown): Html {
  const paths = pathTable(before, after);
  const lines = lineDiff(JSON.stringify(before, null, 2), JSON.stringify(after, null, 2));
  const changed = lines === null ? null : lines.filter((l) => l.op !== 'same').length;
  const plural = (n: number, word: string) => `${word}${n === 1 ? '' : 's'}`;
  return html`<p>Against <code>${active.id}@${active.version}</code> (<span id="diff-against-state">${active.lifecycle}</span>${active.lifecycle === 'active' ? '' : ': no version is active'}): <strong id="diff-paths-count">${paths.count}</strong> changed ${plural(paths.count, 'path')}${
    changed === null
      ? ''
      : html`, <strong id="diff-count">${changed}</strong> changed ${plural(changed, 'line')}`
  }.</p>
${paths.table}
${
  lines === null
    ? html`<p id="definition-diff" class="muted">Too many changed lines to show line by line (past ${MAX_DIFF_EDITS} changed lines, or ${MAX_DIFF_LINES} lines a side): ${paths.complete ? 'the changed paths above are what changed' : 'the changed paths listed above, and the count of those not listed, are all this page can show: read the definition above in full'}.</p>`
    : html`<pre id="definition-diff" class="diff">${withContext(lines, lines.length <= WHOLE_DIFF_LINES ? lines.length : DIFF_CONTEXT).map(diffRow)}</pre>`
}`;
}
