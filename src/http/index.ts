/** @module The REST front. Anything exported here is public API. */
export type { HttpOptions } from './server.js';
export { buildServer, DEFAULT_BODY_LIMIT } from './server.js';
