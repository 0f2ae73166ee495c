/**
 * @module The OAuth protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource`
 * and its path-suffixed form for /mcp: public, so a client can find from a 401 which authorization
 * server to ask. toolgate is a resource server only: any other `/.well-known/*` path (an
 * authorization server's metadata included) is a plain 404.
 */
import type { FastifyInstance } from 'fastify';
import type { OAuthFront } from '../../../api/index.js';
import { described } from '../wire-schemas.js';

export function wellKnownRoutes(app: FastifyInstance, oauth: OAuthFront): void {
  const paths = new Set([
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    new URL(oauth.metadataUrl).pathname,
  ]);
  // The two standard paths by name; a configured one elsewhere as such.
  const operationIds: Record<string, string> = {
    '/.well-known/oauth-protected-resource': 'getProtectedResourceMetadata',
    '/.well-known/oauth-protected-resource/mcp': 'getMcpProtectedResourceMetadata',
  };
  for (const url of paths) {
    app.get(
      url,
      {
        config: { auth: 'public' },
        schema: {
          operationId: operationIds[url] ?? 'getConfiguredProtectedResourceMetadata',
          tags: ['oauth'],
          summary: 'OAuth protected resource metadata (RFC 9728)',
          security: [],
          response: described(200, 'The protected resource metadata'),
        },
      },
      async (_req, reply) =>
        reply
          // Browser-based clients (an MCP inspector) read it cross-origin; it holds nothing secret.
          .header('access-control-allow-origin', '*')
          .header('cache-control', 'max-age=300')
          .type('application/json')
          .send(oauth.metadata),
    );
  }
}
