/**
 * @module The operators' console, a front (docs/architecture.md §2, §6): server-rendered pages
 * under /console on the gateway's own port. Anything exported here is public API.
 */
export type { ConsoleAction, ConsoleContext, ConsolePage } from './console-page.js';
export { type Html, html } from './html.js';
export type { InboxItem, InboxSource } from './inbox.js';
export type { LocalLogin, OidcLogin, SessionPolicy } from './login.js';
export { LOGIN_FAILED, SSO_FAILED, startConsoleSession } from './login.js';
export { registerConsoleWithPasskeys, registerPasskeyRoutes } from './passkey-routes.js';
export { type ConsoleOptions, registerConsole } from './register-console.js';
export { CONTENT_SECURITY_POLICY, SESSION_COOKIE, setSecurityHeaders } from './security.js';
