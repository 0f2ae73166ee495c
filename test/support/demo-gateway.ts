/**
 * @module A gateway with the demo catalog applied and its pending security reviews approved: the
 * starting point of suites about something else, which would otherwise repeat these steps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Actor } from '../../src/core/index.js';
import { type Gateway, openGateway, type ToolgateOptions } from '../../src/host/toolgate.js';
import { ROOT } from './cli.js';
import { approvePendingReviews } from './reviews.js';

const DEMO = join(ROOT, 'demo', 'catalog.yaml');
const SETUP: Actor = { id: 'test-admin', via: 'library' };

/** Opens a gateway, applies the demo catalog as `actor` and approves every pending review. */
export async function openDemoGateway(
  options: ToolgateOptions = {},
  actor: Actor = SETUP,
): Promise<Gateway> {
  const tg = await openGateway(options);
  await tg.config.applyText(readFileSync(DEMO, 'utf8'), actor);
  await approvePendingReviews(tg);
  return tg;
}
