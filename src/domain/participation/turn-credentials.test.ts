import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { iceRenewalMs, iceServersFor, turnCredentials } from './turn-credentials.js';

describe('turnCredentials', () => {
  it('follows the coturn REST scheme: expiry:user and base64 HMAC-SHA1 of the username', () => {
    const now = new Date('2026-03-10T12:00:00Z');
    const { username, credential } = turnCredentials('s3cret', 'peer1', 600, now);
    expect(username).toBe(`${Date.parse('2026-03-10T12:10:00Z') / 1000}:peer1`);
    // Known answer, computed independently of the function under test.
    expect(credential).toBe(createHmac('sha1', 's3cret').update('1773144600:peer1').digest('base64'));
    expect(turnCredentials('other', 'peer1', 600, now).credential).not.toBe(credential);
  });
});

describe('iceServersFor', () => {
  const base = { iceServers: [{ urls: 'stun:stun.example.org:3478' }], turnTtlSeconds: 60 };
  it('adds a TURN entry with credentials only when a secret is configured', () => {
    const now = new Date(0);
    expect(iceServersFor({ ...base, turnSecret: null, turnUrls: [] }, 'p', now)).toEqual([{ urls: 'stun:stun.example.org:3478' }]);
    const withTurn = iceServersFor({ ...base, turnSecret: 'k', turnUrls: ['turn:127.0.0.1:3478'] }, 'p', now);
    expect(withTurn).toHaveLength(2);
    expect(withTurn[1]).toEqual({ urls: ['turn:127.0.0.1:3478'], username: '60:p', credential: createHmac('sha1', 'k').update('60:p').digest('base64') });
  });
});

describe('iceRenewalMs', () => {
  it('is half the credentials\u2019 life with TURN, and null without (nothing expires)', () => {
    const base = { iceServers: [{ urls: 'stun:stun.example.org:3478' }], turnTtlSeconds: 3600 };
    expect(iceRenewalMs({ ...base, turnSecret: 'k', turnUrls: ['turn:127.0.0.1:3478'] })).toBe(1_800_000);
    expect(iceRenewalMs({ ...base, turnTtlSeconds: 10, turnSecret: 'k', turnUrls: ['turn:127.0.0.1:3478'] })).toBe(5_000);
    expect(iceRenewalMs({ ...base, turnSecret: null, turnUrls: [] })).toBeNull();
  });
});
