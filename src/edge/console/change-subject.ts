/**
 * @module What a four-eyes change is about, in full, for its approvers: a tool version's stored
 * definition with its scan findings, provenance, code hash and egress hosts and its line diff
 * against the version active now; a grant's agent and capability. Never
 * only the change's one-line subject: an approver does not decide blind.
 */
import type { ConsoleContext } from './console-page.js';
import { type Html, html } from './html.js';
import { definitionWithDiff, toolFacts } from './pages/tool-facts.js';

type Change = Awaited<ReturnType<ConsoleContext['admin']['changes']['get']>>;

export async function changeSubject(ctx: ConsoleContext, c: Change): Promise<Html> {
  if (c.kind === 'tool' && c.tool_id !== null && c.tool_version !== null) {
    const tool = await ctx.admin.catalog.get(c.tool_id, c.tool_version).catch(() => null);
    if (tool === null) return html`<p class="warn">The tool version of this change is gone.</p>`;
    return html`${toolFacts(tool)}${await definitionWithDiff(ctx, tool)}`;
  }
  return html`<h2>The grant</h2><dl id="change-grant"><dt>Agent</dt><dd><code>${c.agent_id ?? ''}</code></dd>
<dt>Capability</dt><dd><code>${c.capability ?? ''}</code></dd></dl>`;
}
