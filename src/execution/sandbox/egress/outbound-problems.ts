/**
 * @module The start-time check of the outbound URLs a configuration names (notification and alert
 * webhooks, JWKS and token-exchange endpoints): each goes under the outbound rules of `OutboundGuard`
 * before anything is opened, so a URL they refuse stops the start with nothing left behind.
 */
import { problem, ToolgateError } from '../../../core/index.js';
import type { OutboundGuard } from './outbound.js';

/** One configured URL and its configuration key (a JSON pointer); an absent URL is skipped. */
export interface ConfiguredUrl {
  readonly at: string;
  readonly url: string | null | undefined;
}

/**
 * Checks configured outbound URLs (shape, then every resolved address) under the outbound rules;
 * throws INPUT_INVALID listing each refused one at its configuration key, with the egress rule.
 */
export async function refuseOutboundProblems(
  outbound: OutboundGuard,
  urls: readonly ConfiguredUrl[],
): Promise<void> {
  const found = await Promise.all(
    urls.map(async ({ at, url }) => {
      if (!url) return null;
      const p = await outbound.problem(url);
      // A name that does not resolve at start is not fatal: each request resolves and checks
      // again, and is refused then if it still points nowhere allowed.
      return p && p.rule !== 'egress.dns'
        ? problem(
            at,
            `${at.slice(1)} ${p.message}${p.address !== undefined ? ` (${p.address})` : ''}`,
            p.rule,
          )
        : null;
    }),
  );
  const problems = found.filter((p) => p !== null);
  if (problems.length > 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `a configured outbound URL is refused: ${problems.map((p) => p.message).join('; ')}`,
      { problems },
    );
  }
}
