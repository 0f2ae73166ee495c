/**
 * @module The store's edge: a Kysely driver around the dialect's own that translates every
 * driver error on its way out (store-errors.ts: STORE_UNAVAILABLE, StoreCorruptError), so no
 * service or front ever looks at a driver's codes, and that answers STORE_UNAVAILABLE once the
 * store is closed. docs/architecture.md §5.
 *
 * Cost on the hot path: one rejection handler per query, no allocation per query otherwise
 * (each of the dialect's connections is wrapped once and the wrapper kept).
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { rethrowStoreError, storeError, storeUnavailable } from './store-errors.js';

type CompileQuery = QueryCompiler['compileQuery'];

class EdgeConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return this.inner.executeQuery<R>(query).catch(rethrowStoreError);
    } catch (err) {
      // Kysely's SQLite connection runs the statement before it returns its promise.
      return Promise.reject(storeError(err));
    }
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize?: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (err) {
      throw storeError(err);
    }
  }
}

/** The driver methods hand the dialect its own connection: some of them need its private parts. */
function inner(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof EdgeConnection ? connection.inner : connection;
}

export class EdgeDriver implements Driver {
  readonly #inner: Driver;
  readonly #wrapped = new WeakMap<DatabaseConnection, EdgeConnection>();
  #closed: Promise<void> | null = null;

  readonly #immediate: boolean;

  /**
   * `immediateTransactions` (SQLite): a transaction takes the write lock when it begins. SQLite's
   * deferred `begin` takes it at the first write instead, and a transaction that read first and
   * then finds another process (a running gateway, the CLI) wrote meanwhile fails at once with
   * SQLITE_BUSY — the busy timeout never applies to that upgrade. `begin immediate` waits for the
   * lock under the busy timeout like any other write.
   */
  constructor(driver: Driver, options: { readonly immediateTransactions?: boolean } = {}) {
    this.#inner = driver;
    this.#immediate = options.immediateTransactions === true;
  }

  init(): Promise<void> {
    return this.#inner.init().catch(rethrowStoreError);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#closed) throw storeUnavailable();
    let connection: DatabaseConnection;
    try {
      connection = await this.#inner.acquireConnection();
    } catch (err) {
      throw storeError(err);
    }
    let edge = this.#wrapped.get(connection);
    if (!edge) {
      edge = new EdgeConnection(connection);
      this.#wrapped.set(connection, edge);
    }
    return edge;
  }

  async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    // Awaited inside the try: SQLite's driver throws SQLITE_BUSY synchronously, before any
    // promise exists to catch on.
    try {
      if (this.#immediate) {
        await inner(connection).executeQuery(CompiledQuery.raw('begin immediate'));
      } else {
        await this.#inner.beginTransaction(inner(connection), settings);
      }
    } catch (err) {
      throw storeError(err);
    }
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(inner(connection)).catch(rethrowStoreError);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(inner(connection)).catch(rethrowStoreError);
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: CompileQuery) {
    if (!this.#inner.savepoint) throw new Error('this dialect has no savepoints');
    await this.#inner.savepoint(inner(connection), name, compile).catch(rethrowStoreError);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: CompileQuery) {
    if (!this.#inner.rollbackToSavepoint) throw new Error('this dialect has no savepoints');
    await this.#inner
      .rollbackToSavepoint(inner(connection), name, compile)
      .catch(rethrowStoreError);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: CompileQuery) {
    if (!this.#inner.releaseSavepoint) throw new Error('this dialect has no savepoints');
    await this.#inner.releaseSavepoint(inner(connection), name, compile).catch(rethrowStoreError);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection(inner(connection));
  }

  /**
   * Closes the dialect's driver; from then on every query answers STORE_UNAVAILABLE. The store
   * closes through here rather than `Kysely.destroy()`, whose own "destroyed" error would come
   * from above this driver, untranslated.
   */
  destroy(): Promise<void> {
    this.#closed ??= this.#inner.destroy();
    return this.#closed;
  }
}

/** The dialect with its driver behind the edge; `driver` is the one Kysely will use. */
export function edgeDialect(
  dialect: Dialect,
  options: { readonly immediateTransactions?: boolean } = {},
): { dialect: Dialect; driver: EdgeDriver } {
  const driver = new EdgeDriver(dialect.createDriver(), options);
  const edge: Dialect = {
    createDriver: () => driver,
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
  return { driver, dialect: edge };
}
