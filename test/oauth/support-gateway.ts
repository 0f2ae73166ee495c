/**
 * @module The gateway the OAuth flow tests call: the demo catalog, reviews approved, one issuer
 * (the test authorization server) whose `support-client` acts as `support-bot`, and the demo's
 * scope → capability table. The test authorization server listens on loopback: the admin's
 * setting allows it.
 */
import { join } from 'node:path';
import type { Actor } from '../../src/core/index.js';
import { parseOAuthConfig } from '../../src/domain/identity/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';
import { openDemoGateway } from '../support/world.js';
import type { AuthorizationServer } from './authorization-server.js';

/** Opens it on a SQLite file in `dir`, protecting `resource`, set up as `admin`. */
export function openSupportGateway(
  dir: string,
  as: AuthorizationServer,
  resource: string,
  admin: Actor,
): Promise<Gateway> {
  return openDemoGateway(
    {
      outbound: LOOPBACK_OUTBOUND,
      db: `sqlite:${join(dir, 'tg.db')}`,
      oauth: parseOAuthConfig({
        resource,
        issuers: [{ issuer: as.issuer, jwksUrl: as.jwksUrl }],
        clients: { 'support-client': 'support-bot' },
        scopes: {
          'tickets.read': ['tickets:read', 'orders:read'],
          'tickets.write': ['tickets:write'],
          'iam.grant': ['iam:grant'],
        },
      }),
    },
    admin,
  );
}
