/**
 * @module OAuth 2.0 Protected Resource Metadata (RFC 9728) for toolgate's /mcp resource: the
 * document a client finds from a 401, naming the authorization servers that issue tokens for it.
 */
import type { OAuthResourceServerConfig } from './resource-server-config.js';

export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported: readonly string[];
  readonly bearer_methods_supported: readonly ['header'];
  readonly resource_name: string;
}

export function protectedResourceMetadata(
  config: OAuthResourceServerConfig,
): ProtectedResourceMetadata {
  return {
    resource: config.resource,
    authorization_servers: config.issuers.map((i) => i.issuer),
    scopes_supported: Object.keys(config.scopes).sort(),
    // Tokens in a query string or a form body end up in logs; only the header is accepted.
    bearer_methods_supported: ['header'],
    resource_name: 'toolgate',
  };
}

/**
 * Where the metadata of `resource` is published (RFC 9728 §3.1): the well-known segment goes
 * between the host and the resource's path, so `https://h/mcp` →
 * `https://h/.well-known/oauth-protected-resource/mcp`.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/oauth-protected-resource${path}${url.search}`;
}
