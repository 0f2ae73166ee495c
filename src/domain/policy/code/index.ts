/**
 * @module The static code guard (C9): JavaScript and Python code arguments parsed by real parsers
 * and refused before any sandbox starts. Anything exported here is public API.
 */
export { checkCode, UNCHECKABLE_CODE_RULES } from './code-guard.js';
export type { CodeLanguage, CodeVerdict } from './code-verdict.js';
export { CODE_LANGUAGES, MAX_CODE_CHARS, PARSE_TIMEOUT_MS } from './code-verdict.js';
export { checkJavaScript } from './javascript-guard.js';
export type { PythonGuardOptions } from './python-guard.js';
export { checkPython } from './python-guard.js';
