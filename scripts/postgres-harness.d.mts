/** Types for postgres-harness.mjs, so TypeScript tests and benchmarks can import it. */
export function startPostgres(): Promise<{ url: string; stop: () => void }>;
export const PASSWORD_GROUP: string;
