/**
 * Report rendering: CSV is RFC 4180 and defuses spreadsheet formulas in text cells; Markdown
 * escapes pipes so a cell can never add a column or a row.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Report, renderCsv, renderMarkdown } from '../../src/operations/reports/index.js';
import { parseCsv } from './csv.js';

const hostile: Report = {
  report: 'capability-register',
  title: 'Hostile | cells',
  generated_at: '2026-06-01T00:00:00.000Z',
  period: null,
  columns: ['text', 'number'],
  rows: [
    { text: '=HYPERLINK("http://evil.example","x")', number: -5 },
    { text: '+SUM(A1:A2)', number: 0 },
    { text: '-2+3', number: 1.5 },
    { text: '@cmd', number: null },
    { text: '\t=1', number: 2 },
    { text: 'a,b', number: 3 },
    { text: 'he said "hi"', number: 4 },
    { text: 'two\nlines | and a pipe \\ backslash', number: 5 },
    { text: ' padded ', number: 6 },
    { text: 'plain', number: 7 },
  ],
  notes: ['a | note'],
};

test('CSV: RFC 4180 quoting, CRLF records, formula-looking text prefixed with an apostrophe', () => {
  const csv = renderCsv(hostile);
  assert.ok(csv.endsWith('\r\n'));
  const records = parseCsv(csv);
  assert.deepEqual(records, [
    ['text', 'number'],
    [`'=HYPERLINK("http://evil.example","x")`, '-5'],
    [`'+SUM(A1:A2)`, '0'],
    [`'-2+3`, '1.5'],
    [`'@cmd`, ''],
    [`'\t=1`, '2'],
    ['a,b', '3'],
    ['he said "hi"', '4'],
    ['two\nlines | and a pipe \\ backslash', '5'],
    [' padded ', '6'],
    ['plain', '7'],
  ]);
  // No cell starts with a formula character once read back, except numbers we wrote.
  for (const [text] of records.slice(1)) assert.ok(!/^[=+\-@\t\r]/.test(text ?? ''), text);
});

test('Markdown: pipes and backslashes escaped, line breaks flattened: every row has two cells', () => {
  const md = renderMarkdown(hostile);
  assert.match(md, /^# Hostile \\\| cells\n/);
  const rows = md.split('\n').filter((l) => l.startsWith('| '));
  assert.equal(rows.length, 2 + hostile.rows.length);
  for (const r of rows) {
    // Unescaped pipes delimit cells: 3 of them for 2 columns.
    const delimiters = r.replace(/\\\\/g, '').replace(/\\\|/g, '').split('|').length - 1;
    assert.equal(delimiters, 3, r);
  }
  assert.ok(md.includes('two lines \\| and a pipe \\\\ backslash'));
  assert.ok(md.includes('- a \\| note'));
});

test('an empty report says so in Markdown and is a header line in CSV', () => {
  const empty: Report = { ...hostile, rows: [] };
  assert.match(renderMarkdown(empty), /_No rows\._/);
  assert.equal(renderCsv(empty), 'text,number\r\n');
});
