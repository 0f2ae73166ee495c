/** @module The REST front. Anything exported here is public API. */

export { drainServer } from './drain.js';
export type { HttpOptions, RegisteredRoute } from './server.js';
export { buildServer, DEFAULT_BODY_LIMIT } from './server.js';
