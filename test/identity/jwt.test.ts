/**
 * Agents authenticated by JWT against a JWKS (file and loopback URL): issuer, audience and
 * expiry enforced; the user and permissions a token carries bound the session.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';

const admin: Actor = { id: 'admin', via: 'library' };
type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
const ISSUER = 'https://idp.example.com';
const AUDIENCE = 'toolgate';

let dir: string;
let privateKey: Key;
let publicJwk: JWK;
let otherKey: Key;
let jwksServer: Server;
let jwksUrl = '';

async function token(
  claims: Record<string, unknown>,
  options: { key?: Key; exp?: string | number; iss?: string; aud?: string } = {},
) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? '5m')
    .sign(options.key ?? privateKey);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-jwt-'));
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  otherKey = (await generateKeyPair('ES256')).privateKey;
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [publicJwk] }));
  jwksServer = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
  const address = jwksServer.address();
  jwksUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/jwks.json`;
});
after(() => {
  jwksServer.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

for (const source of ['file', 'url'] as const) {
  describe(`JWT agents, keys from a JWKS ${source}`, () => {
    let tg: Gateway;
    let base: string;
    let close: () => Promise<void>;

    before(async () => {
      const sqlite = backends().find((b) => b.name === 'sqlite');
      assert.ok(sqlite);
      const fresh = await sqlite.fresh();
      tg = await openGateway({
        // The test authorization server listens on loopback: the admin's setting allows it.
        outbound: LOOPBACK_OUTBOUND,
        db: fresh.url,
        jwt: {
          issuer: ISSUER,
          audience: AUDIENCE,
          ...(source === 'file' ? { jwksFile: join(dir, 'jwks.json') } : { jwksUrl }),
          userClaim: 'act_for',
          permissionsClaim: 'scope',
        },
      });
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'jwt-bot', owner: 'qa' } },
          {
            kind: 'Tool',
            spec: validTool({ id: 'read_a', name: 'read_a', required_capabilities: ['a:read'] }),
          },
          {
            kind: 'Tool',
            spec: validTool({ id: 'read_b', name: 'read_b', required_capabilities: ['b:read'] }),
          },
          { kind: 'Grant', spec: { agent: 'jwt-bot', capabilities: ['a:read', 'b:read'] } },
        ],
        admin,
      );
      const app = await buildServer(tg, { adminToken: 'jwt-test-admin-token-0123456789' });
      base = await app.listen({ host: '127.0.0.1', port: 0 });
      close = async () => {
        await app.close();
        await tg.close();
        await fresh.drop();
      };
    });
    after(() => close());

    const open = async (bearer: string, body: unknown = {}) => {
      const res = await fetch(`${base}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: res.status,
        body: (await res.json()) as { user_id?: string; tools?: { name: string }[]; code?: string },
      };
    };

    test('a valid token opens a session as its agent', async () => {
      const res = await open(await token({ sub: 'jwt-bot' }));
      assert.equal(res.status, 201);
      assert.deepEqual(res.body.tools?.map((t) => t.name).sort(), ['read_a', 'read_b']);
    });

    test('the user and permissions in the token narrow the session to what both may do', async () => {
      const res = await open(
        await token({ sub: 'jwt-bot', act_for: 'carol@example.com', scope: 'a:read other:thing' }),
      );
      assert.equal(res.status, 201);
      assert.equal(res.body.user_id, 'carol@example.com');
      assert.deepEqual(
        res.body.tools?.map((t) => t.name),
        ['read_a'],
      );
      const mismatch = await open(
        await token({ sub: 'jwt-bot', act_for: 'carol@example.com', scope: 'a:read' }),
        { on_behalf_of: 'dave@example.com' },
      );
      assert.equal(mismatch.status, 403);
    });

    test('a JWT agent names local users only: a user id in the OAuth form is refused, not taken for that OAuth user', async () => {
      const posing = await open(
        await token({
          sub: 'jwt-bot',
          act_for: 'oauth:["https://as.example","carol"]',
          scope: 'a:read',
        }),
      );
      assert.equal(posing.status, 401);
      assert.equal(posing.body.code, 'UNAUTHENTICATED');
      // Benign neighbour: the local user of the same name acts as before.
      const local = await open(await token({ sub: 'jwt-bot', act_for: 'carol', scope: 'a:read' }));
      assert.equal(local.status, 201);
      assert.equal(local.body.user_id, 'carol');
    });

    test('expired, wrong issuer, wrong audience, foreign key, unknown agent and malformed permissions are refused', async () => {
      const bad = [
        await token({ sub: 'jwt-bot' }, { exp: Math.floor(Date.now() / 1000) - 60 }),
        await token({ sub: 'jwt-bot' }, { iss: 'https://evil.example' }),
        await token({ sub: 'jwt-bot' }, { aud: 'someone-else' }),
        await token({ sub: 'jwt-bot' }, { key: otherKey }),
        await token({ sub: 'ghost-bot' }),
        await token({ sub: 'jwt-bot', act_for: 'carol@example.com', scope: ['a:read', 42] }),
        'eyJhbGciOiJub25lIn0.eyJzdWIiOiJqd3QtYm90In0.',
      ];
      for (const t of bad) {
        const res = await open(t);
        assert.equal(res.status, 401, t.slice(0, 40));
        assert.equal(res.body.code, 'UNAUTHENTICATED');
      }
    });
  });
}
