/**
 * @module The query and response fields every REST list shares: `?cursor=…&limit=…`
 * in, `next_cursor` out (null on the last page). The walk itself is src/core/page.ts.
 */
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../core/index.js';

export const pageQuery = {
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 2000,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'The `next_cursor` of the previous page (opaque)',
  },
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_LIMIT,
    default: DEFAULT_PAGE_LIMIT,
    description: `Entries per page, 1–${MAX_PAGE_LIMIT}`,
  },
} as const;

export const nextCursor = {
  next_cursor: {
    type: ['string', 'null'],
    description: 'Pass as `cursor` for the next page; null on the last page',
  },
} as const;

export interface PageQuery {
  readonly cursor?: string;
  readonly limit: number;
}
