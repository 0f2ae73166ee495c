/** @module Who performed an administrative action, as recorded in the events table. */

export interface Actor {
  /** `cli:alice`, `admin-token`, `system:lifecycle` … */
  readonly id: string;
  /** Which front the action came through. */
  readonly via: 'cli' | 'rest' | 'console' | 'system' | 'library';
}

export const systemActor = (what: string): Actor => ({ id: `system:${what}`, via: 'system' });
