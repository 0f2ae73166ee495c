/** @module `Mutable<T>`: a readonly type's fields made writable, for building a value field by field. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
