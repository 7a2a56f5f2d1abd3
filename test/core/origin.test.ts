import { describe, expect, it } from 'vitest';
import { exactOrigin, headersForOrigin } from '../../src/core/index.js';

describe('exactOrigin', () => {
  it('makes the default port explicit and keeps the scheme', () => {
    expect(exactOrigin('https://api.example.com/v1')).toBe('https://api.example.com:443');
    expect(exactOrigin('http://api.example.com/')).toBe('http://api.example.com:80');
    expect(exactOrigin('https://api.example.com:8080')).toBe('https://api.example.com:8080');
  });

  it('spells one origin one way: case, a trailing dot, user info, IPv6 and IPv4 spellings', () => {
    expect(exactOrigin('HTTPS://API.Example.COM.:443/x')).toBe('https://api.example.com:443');
    expect(exactOrigin('https://user:pw@api.example.com/')).toBe('https://api.example.com:443');
    expect(exactOrigin('http://[::FFFF:127.0.0.1]:8080')).toBe('http://[::ffff:7f00:1]:8080');
    expect(exactOrigin('http://[::1]')).toBe('http://[::1]:80');
    expect(exactOrigin('http://2130706433:81/')).toBe('http://127.0.0.1:81');
    expect(exactOrigin('https://bücher.example')).toBe('https://xn--bcher-kva.example:443');
  });

  it('has no origin for other schemes, non-URLs and empty hosts', () => {
    expect(exactOrigin('ftp://api.example.com')).toBeUndefined();
    expect(exactOrigin('api.example.com')).toBeUndefined();
    expect(exactOrigin('http://a.com../')).toBeUndefined();
  });
});

describe('headersForOrigin', () => {
  const headers = [
    { origin: 'https://api.example.com:443', name: 'Authorization', value: 'Bearer tls' },
    { origin: 'http://127.0.0.1:8080', name: 'X-Key', value: 'k8080' },
    { name: 'X-Every', value: 'e' },
  ];

  it('adds a bound header only to its exact origin, and an unbound one to every request', () => {
    expect(headersForOrigin(headers, 'https://API.example.com./v1')).toEqual({
      authorization: 'Bearer tls',
      'x-every': 'e',
    });
    expect(headersForOrigin(headers, 'http://127.0.0.1:8080/x')).toEqual({
      'x-key': 'k8080',
      'x-every': 'e',
    });
  });

  it('never adds a header bound to https:443 to another port or to plain http of its host', () => {
    for (const url of [
      'https://api.example.com:8443/',
      'http://api.example.com/',
      'http://api.example.com:443/',
      'https://api.example.com.evil.test/',
      'https://evil.test/?https://api.example.com',
    ])
      expect(headersForOrigin(headers, url)).toEqual({ 'x-every': 'e' });
    expect(headersForOrigin(headers, 'http://127.0.0.1:8081/')).toEqual({ 'x-every': 'e' });
    expect(headersForOrigin(headers, 'http://[::1]:8080/')).toEqual({ 'x-every': 'e' });
  });
});
