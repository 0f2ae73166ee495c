/**
 * @module Hands a front some members of a service and nothing else: the object a front holds has
 * only the named methods (bound to the service) and properties (read live), so what the API's
 * type leaves out (a provider's `call`, the audit log's `writer`…) is not reachable at run time
 * either.
 */

/** The descriptor of `key` on `target` or the first prototype that has it. */
function descriptorOf(target: object, key: PropertyKey): PropertyDescriptor | undefined {
  for (let o: object | null = target; o !== null; o = Object.getPrototypeOf(o)) {
    const d = Object.getOwnPropertyDescriptor(o, key);
    if (d) return d;
  }
  return undefined;
}

/**
 * A frozen object with exactly `keys` of `target`. Methods are bound once here, not per call;
 * getters and fields are read when the front reads them (a lazy `verifierKey` stays lazy).
 */
export function expose<T extends object, const K extends keyof T>(
  target: T,
  keys: readonly K[],
): Pick<T, K> {
  const out = {};
  for (const key of keys) {
    const d = descriptorOf(target, key);
    if (d === undefined) throw new TypeError(`expose: no member ${String(key)}`);
    if (typeof d.value === 'function') {
      Object.defineProperty(out, key, {
        value: (d.value as (...args: unknown[]) => unknown).bind(target),
        enumerable: true,
      });
    } else {
      Object.defineProperty(out, key, { get: () => target[key], enumerable: true });
    }
  }
  return Object.freeze(out) as Pick<T, K>;
}
