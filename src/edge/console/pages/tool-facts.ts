/**
 * @module What a person deciding about a tool version reads besides its definition: the
 * description scan's findings (each in the text it was found in), provenance, code hash, egress
 * hosts and definition hash; and, for a four-eyes change, the full definition with its line diff
 * against the version active now (canonical JSON, keys sorted, so only real changes show). Shared
 * by the security review page and the change page; every value is text through `html`.
 */
import { canonicalJson, lineDiff } from '../../../core/index.js';
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

/** A definition as reviewers compare it: canonical JSON (keys sorted), indented. */
function definitionText(definition: unknown): string {
  return JSON.stringify(JSON.parse(canonicalJson(definition)), null, 2);
}

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

/** The full definition of `tool`, and its line diff against the version active now. */
export async function definitionWithDiff(ctx: ConsoleContext, tool: Detail): Promise<Html> {
  const active = await activeVersion(ctx, tool.id, tool.version);
  const text = definitionText(tool.definition);
  const diff =
    active === null
      ? html`<p id="definition-diff" class="muted">No other version of <code>${tool.id}</code> exists: the whole definition is new.</p>`
      : diffBlock(active, definitionText(active.definition), text);
  return html`<h2>Definition</h2><div id="change-definition">${jsonBlock(JSON.parse(text))}</div>
<h2>Against the version in use</h2>${diff}`;
}

function diffBlock(active: Detail, before: string, after: string): Html {
  const lines = lineDiff(before, after);
  if (lines === null) {
    return html`<p id="definition-diff" class="muted">Too long to compare line by line; version ${active.version} (${active.lifecycle}) is:</p>${jsonBlock(active.definition)}`;
  }
  const changed = lines.filter((l) => l.op !== 'same').length;
  const sign = { same: ' ', add: '+', remove: '-' } as const;
  return html`<p>Against <code>${active.id}@${active.version}</code> (<span id="diff-against-state">${active.lifecycle}</span>${active.lifecycle === 'active' ? '' : ': no version is active'}): <strong id="diff-count">${changed}</strong> changed line${changed === 1 ? '' : 's'}.</p>
<pre id="definition-diff" class="diff">${lines.map((l) => html`<span class="diff-${l.op}">${sign[l.op]} ${l.text}\n</span>`)}</pre>`;
}
