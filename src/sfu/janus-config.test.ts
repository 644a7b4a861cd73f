// The generated configuration of a local Janus, and the SFU settings that
// feed it (docs/design.md, "Group calls through an SFU").
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { janusConfigFiles } from './janus-config.js';

const settings = { folder: '/tmp/j', httpPort: 18088, apiSecret: 's3cret', rtpPorts: { min: 30000, max: 30100 }, publicAddress: null, interfaces: [], stunServer: null };

describe('a local Janus configuration', () => {
  it('serves its API on 127.0.0.1 only, with the secret, and gathers media on the given range', () => {
    const files = janusConfigFiles(settings, { plugins: '/nonexistent', transports: '/nonexistent' });
    expect(files['janus.jcfg']).toContain('api_secret = "s3cret"');
    expect(files['janus.jcfg']).toContain('rtp_port_range = "30000-30100"');
    expect(files['janus.jcfg']).not.toContain('nat_1_1_mapping');
    expect(files['janus.transport.http.jcfg']).toMatch(/port = 18088\n\s+ip = "127.0.0.1"/);
    expect(files['janus.transport.http.jcfg']).toContain('admin_http = false');
    // No demo rooms: Parley creates each with a secret of its own.
    expect(files['janus.plugin.videoroom.jcfg']).toBe('general: {\n}\n');
  });

  it('announces a public address behind a 1:1 NAT and gathers only on the interfaces named', () => {
    const files = janusConfigFiles({ ...settings, publicAddress: '203.0.113.7', interfaces: ['veth0', 'eth1'] }, { plugins: '/x', transports: '/x' });
    expect(files['janus.jcfg']).toContain('nat_1_1_mapping = "203.0.113.7"');
    expect(files['janus.jcfg']).toContain('ice_enforce_list = "veth0,eth1"');
  });
});

describe('SFU settings', () => {
  it('are off by default, with three people the threshold', () => {
    const config = loadConfig({});
    expect(config.sfu).toBe('off');
    expect(config.sfuMinParticipants).toBe(3);
    expect(config.janusRtpPorts).toEqual({ min: 20000, max: 40000 });
    expect(config.sfuLostRoomSeconds).toBe(30);
    expect(loadConfig({ SFU_LOST_ROOM_SECONDS: '8' }).sfuLostRoomSeconds).toBe(8);
  });

  it('refuse what cannot work, naming the variable', () => {
    expect(() => loadConfig({ SFU: 'mediasoup' })).toThrow(/SFU must be "off" or "janus"/);
    expect(() => loadConfig({ JANUS_URLS: 'http://janus:8088/janus' })).toThrow(/JANUS_URLS is set but SFU is "off"/);
    expect(() => loadConfig({ SFU: 'janus', JANUS_URLS: 'ws://janus:8188' })).toThrow(ConfigError);
    expect(() => loadConfig({ SFU: 'janus', JANUS_RTP_PORTS: '40000-30000' })).toThrow(/JANUS_RTP_PORTS/);
    expect(() => loadConfig({ SFU: 'janus', REDIS_URL: 'redis://r:6379' })).toThrow(/JANUS_URLS must list/);
    for (const bad of ['0', '3601', 'soon']) expect(() => loadConfig({ SFU_LOST_ROOM_SECONDS: bad })).toThrow(/SFU_LOST_ROOM_SECONDS/);
    expect(loadConfig({ SFU: 'janus', JANUS_URLS: 'http://a:8088/janus, http://b:8088/janus' }).janusUrls).toEqual(['http://a:8088/janus', 'http://b:8088/janus']);
  });
});
