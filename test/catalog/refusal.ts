/**
 * @module How the catalog suites take a refusal: the error a promise rejects with, as `E` (the
 * catalogue's `ToolgateError` by default); a promise that resolves fails the test.
 */
import assert from 'node:assert/strict';
import type { ToolgateError } from '../../src/core/index.js';

export async function refusal<E = ToolgateError>(promise: Promise<unknown>): Promise<E> {
  try {
    await promise;
  } catch (err) {
    return err as E;
  }
  assert.fail('expected a refusal');
}
