/**
 * @module `node:http` as its CommonJS object. An ES import of it builds the module's ES facade,
 * which reads every export, and so loads Node's bundled fetch (undici, about 90 ms) through the
 * lazy `WebSocket` and `fetch` getters: the start of every CLI command paid for it, though only a
 * call of an HTTP tool or the egress proxy sends a request (docs/architecture.md §4).
 */
export const http = process.getBuiltinModule('node:http');

/** The types of what it makes, for modules that import nothing else of `node:http`. */
export type { IncomingMessage, Server, ServerResponse } from 'node:http';
