import { describe, expect, it } from 'vitest';
import { loadOAuthConfig } from '../../src/app/oauth-config.js';
import type { ReachConfig } from '../../src/app/reach-config.js';
import { principalOf, DEFAULT_CLAIMS } from '../../src/oauth/index.js';

const reach: ReachConfig = {
  publicUrl: 'https://gw.example.com',
  allowedHosts: [],
  allowedOrigins: [],
  trustedProxies: [],
};
const issuer = { GATEHOUSE_OAUTH_ISSUER: 'https://auth.example.com' };

describe('GATEHOUSE_OAUTH_*', () => {
  it('is off without an issuer, and takes the public URL as the audience by default', () => {
    expect(loadOAuthConfig({}, reach)).toBeNull();
    expect(loadOAuthConfig(issuer, reach)).toMatchObject({
      issuer: 'https://auth.example.com',
      audience: 'https://gw.example.com',
      jwksUri: null,
      algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      claims: DEFAULT_CLAIMS,
    });
  });

  it('refuses none, shared-secret algorithms, a missing audience and malformed claims, naming the variable', () => {
    for (const alg of ['none', 'HS256', 'RS256,none'])
      expect(() => loadOAuthConfig({ ...issuer, GATEHOUSE_OAUTH_ALGORITHMS: alg }, reach)).toThrow(
        /GATEHOUSE_OAUTH_ALGORITHMS may list only asymmetric/,
      );
    expect(() => loadOAuthConfig(issuer, { ...reach, publicUrl: null })).toThrow(
      /set GATEHOUSE_PUBLIC_URL \(or GATEHOUSE_OAUTH_AUDIENCE\)/,
    );
    expect(() => loadOAuthConfig({ GATEHOUSE_OAUTH_ISSUER: 'ftp://x' }, reach)).toThrow(
      /GATEHOUSE_OAUTH_ISSUER must be an http\(s\) URL/,
    );
    expect(() =>
      loadOAuthConfig({ ...issuer, GATEHOUSE_OAUTH_CLAIMS: 'tenant=tid,colour=c' }, reach),
    ).toThrow(/KEY one of tenant, roles, project, agent; got "colour=c"/);
    expect(
      loadOAuthConfig({ ...issuer, GATEHOUSE_OAUTH_CLAIMS: 'tenant=tid' }, reach)!.claims.tenant,
    ).toBe('tid');
  });
});

describe('principalOf', () => {
  const known = (t: string) => t === 'acme';
  const base = { sub: 'bot', gatehouse_tenant: 'acme' };

  it('maps roles from an array or a space-separated string; an agent is an agent only', () => {
    expect(
      principalOf({ ...base, gatehouse_roles: 'reviewer operator' }, DEFAULT_CLAIMS, known),
    ).toMatchObject({ id: 'oauth:bot', tenant: 'acme', roles: ['reviewer', 'operator'] });
    expect(
      principalOf(
        {
          ...base,
          gatehouse_roles: ['agent', 'admin'],
          gatehouse_project: 'web',
          gatehouse_agent: 'demo-agent@1.0.0',
        },
        DEFAULT_CLAIMS,
        known,
      ),
    ).toMatchObject({
      roles: ['agent'],
      project: 'web',
      agent: { id: 'demo-agent', version: '1.0.0' },
    });
  });

  it('refuses an unknown tenant or role, and an agent without project or release', () => {
    expect(() =>
      principalOf(
        { ...base, gatehouse_tenant: 'x', gatehouse_roles: 'admin' },
        DEFAULT_CLAIMS,
        known,
      ),
    ).toThrow(/names tenant x, which this gateway does not have/);
    expect(() =>
      principalOf({ ...base, gatehouse_roles: ['root'] }, DEFAULT_CLAIMS, known),
    ).toThrow(/unknown roles in claim gatehouse_roles: "root"/);
    expect(() =>
      principalOf(
        { ...base, gatehouse_roles: 'agent', gatehouse_agent: 'a@1' },
        DEFAULT_CLAIMS,
        known,
      ),
    ).toThrow(/must name its project/);
  });
});
