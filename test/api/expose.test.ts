/** @module expose: a front's view of a service holds only the named members, live and bound. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expose } from '../../src/api/index.js';

class Service {
  #secret = 'internal';
  reads = 0;
  count = 1;
  get lazy(): string {
    this.reads += 1;
    return this.#secret;
  }
  hello(name: string): string {
    return `${this.#secret}:${name}`;
  }
  danger(): string {
    return this.#secret;
  }
}

test('only the named members are there; methods keep their service; getters stay lazy and live', () => {
  const service = new Service();
  const view = expose(service, ['hello', 'lazy', 'count']);
  assert.equal(service.reads, 0, 'exposing reads no getter');
  assert.deepEqual(Object.keys(view).sort(), ['count', 'hello', 'lazy']);
  assert.equal('danger' in view, false);
  // A bound method still reaches the service's private fields, even called detached.
  const { hello } = view;
  assert.equal(hello('x'), 'internal:x');
  assert.equal(view.lazy, 'internal');
  assert.equal(service.reads, 1);
  service.count = 2;
  assert.equal(view.count, 2, 'fields are read when read, not copied');
  assert.ok(Object.isFrozen(view));
  assert.throws(() => {
    (view as { count: number }).count = 3;
  }, TypeError);
});

test('a member the service does not have is refused when the API is built, not when used', () => {
  const service = new Service();
  assert.throws(() => expose(service, ['missing' as keyof Service]), /no member missing/);
});
