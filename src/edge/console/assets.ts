/**
 * @module The console's one script and one stylesheet, kept as strings so `tsc` ships them (it
 * copies no other files) and served under content-hashed paths with a year's cache: a changed
 * asset is a new URL. The script formats the time left, and runs the passkey ceremonies (which
 * need it); every other part of every page works without it.
 */
import { createHash } from 'node:crypto';
import { PASSKEY_SCRIPT } from './passkey-script.js';

const SCRIPT = `'use strict';
(function () {
  function left(ms) {
    if (ms <= 0) return 'expired';
    var m = Math.floor(ms / 60000), h = Math.floor(m / 60), d = Math.floor(h / 24);
    if (d > 0) return d + 'd ' + (h % 24) + 'h';
    if (h > 0) return h + 'h ' + (m % 60) + 'm';
    return m + 'm';
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-expires]').forEach(function (el) {
      var at = Date.parse(el.getAttribute('data-expires') || '');
      if (!isNaN(at)) el.textContent = left(at - now);
    });
  }
  tick();
  setInterval(tick, 30000);
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (e) {
      if (!window.confirm(form.getAttribute('data-confirm') || 'Sure?')) e.preventDefault();
    });
  });
})();
`;

const STYLE = `:root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #d9dee7; --accent: #1f5fbf; --bad: #b42318; --ok: #137333; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg); background: #f6f7f9; }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #fff; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; letter-spacing: .02em; }
header nav { display: flex; gap: 16px; flex: 1; }
header nav a { color: var(--fg); text-decoration: none; }
header nav a.here { color: var(--accent); font-weight: 600; }
header .who { color: var(--muted); }
.badge { display: inline-block; min-width: 22px; padding: 1px 7px; border-radius: 11px; background: var(--accent); color: #fff; font-size: 12px; text-align: center; }
main { max-width: 1180px; margin: 24px auto; padding: 0 24px; }
h1 { font-size: 20px; margin: 0 0 16px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); background: #fafbfc; }
td code, pre { font: 12.5px/1.4 ui-monospace, 'SFMono-Regular', Menlo, monospace; }
pre { background: #fff; border: 1px solid var(--line); padding: 12px; overflow: auto; white-space: pre-wrap; word-break: break-word; }
dl { display: grid; grid-template-columns: 180px 1fr; gap: 6px 16px; background: #fff; border: 1px solid var(--line); padding: 12px 16px; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
.kind { font-size: 12px; padding: 1px 6px; border-radius: 4px; background: #e8eefb; color: var(--accent); }
.class-irreversible, .class-permission_change { color: var(--bad); font-weight: 600; }
.flash { padding: 10px 14px; background: #fff8e1; border: 1px solid #f1d48a; margin-bottom: 16px; }
.error { padding: 10px 14px; background: #fdecea; border: 1px solid #f3b3ac; color: var(--bad); margin-bottom: 16px; }
.actions { display: flex; gap: 24px; margin-top: 20px; flex-wrap: wrap; }
.actions form { background: #fff; border: 1px solid var(--line); padding: 14px; min-width: 320px; }
label { display: block; margin: 6px 0 4px; color: var(--muted); }
input[type=text], input[type=password], textarea { width: 100%; padding: 7px 9px; border: 1px solid var(--line); border-radius: 4px; font: inherit; }
button { margin-top: 10px; padding: 7px 16px; border: 0; border-radius: 4px; background: var(--accent); color: #fff; font: inherit; cursor: pointer; }
button.reject { background: var(--bad); }
button.link { background: none; color: var(--muted); padding: 0; margin: 0; }
.login { max-width: 380px; margin: 80px auto; background: #fff; border: 1px solid var(--line); padding: 24px; }
.pager { margin-top: 12px; }
.muted { color: var(--muted); }
.diff-add { background: #e6f4ea; } .diff-remove { background: #fdecea; } .diff-skip { color: var(--muted); font-style: italic; }
#definition-paths td:first-child { font-weight: 600; }
`;

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f5fbf"/><path d="M4 5h8M8 5v7" stroke="#fff" stroke-width="2"/></svg>`;

function hashed(kind: 'js' | 'css' | 'svg', text: string) {
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return { path: `/console/assets/console.${hash}.${kind}`, file: `console.${hash}.${kind}`, text };
}

// The passkey ceremonies ride in the same one script (passkey-script.ts).
export const CONSOLE_SCRIPT = hashed('js', SCRIPT + PASSKEY_SCRIPT);
export const CONSOLE_STYLE = hashed('css', STYLE);
export const CONSOLE_ICON = hashed('svg', ICON);
