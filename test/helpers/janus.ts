// A real Janus for the tests, started and supervised the way `npm start`
// does (src/local-janus.ts): generated configuration, HTTP API on 127.0.0.1,
// its own RTP port range. Janus missing fails the test (with CI=true and
// without): no test skips for want of it (test/README.md).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { janusInstalled, loadConfig } from '../../src/config.js';
import { startLocalJanus, type LocalJanus } from '../../src/local-janus.js';
import { janusAnswers } from '../../src/sfu/janus-client.js';
import { writeJanusConfig } from '../../src/sfu/janus-config.js';
import { eventually } from './wait.js';

let nextPorts = 43000 + (process.pid % 40) * 200;

/** A Janus of the test's own; `interfaces` for ICE on a test network (Janus skips loopback). */
export async function startTestJanus(options: { interfaces?: string[]; apiSecret?: string } = {}): Promise<LocalJanus> {
  if (!janusInstalled()) throw new Error('janus is not installed: apt-get install janus janus-tools (.ci/run installs it)');
  const ports = `${nextPorts}-${nextPorts + 99}`;
  nextPorts += 100;
  const config = loadConfig({ SFU: 'janus', JANUS_API_SECRET: options.apiSecret ?? 'test-janus-secret', JANUS_RTP_PORTS: ports, JANUS_INTERFACES: (options.interfaces ?? []).join(','), LOG_LEVEL: 'silent' });
  return startLocalJanus(config, pino({ level: 'silent' }));
}

/**
 * A publisher's SDP offer as a browser would send it (Opus and VP8, bundled,
 * DTLS fingerprint, ICE credentials): enough for Janus to answer. Its ICE never
 * completes, which is all a test without a browser needs.
 */
export function publisherOffer(): string {
  const fingerprint = Array.from({ length: 32 }, (_, i) => (i * 7 + 16).toString(16).toUpperCase().padStart(2, '0')).join(':');
  const common = ['c=IN IP4 0.0.0.0', 'a=rtcp:9 IN IP4 0.0.0.0', 'a=ice-ufrag:prly', 'a=ice-pwd:parleyparleyparleyparley', 'a=ice-options:trickle', `a=fingerprint:sha-256 ${fingerprint}`, 'a=setup:actpass'];
  return [
    'v=0',
    'o=- 4611731400430051336 2 IN IP4 127.0.0.1',
    's=-',
    't=0 0',
    'a=group:BUNDLE 0 1',
    'a=msid-semantic: WMS parley',
    'm=audio 9 UDP/TLS/RTP/SAVPF 111',
    ...common,
    'a=mid:0',
    'a=sendonly',
    'a=msid:parley audio0',
    'a=rtcp-mux',
    'a=rtpmap:111 opus/48000/2',
    'a=fmtp:111 minptime=10;useinbandfec=1',
    'a=ssrc:1111 cname:parley',
    'm=video 9 UDP/TLS/RTP/SAVPF 96',
    ...common,
    'a=mid:1',
    'a=sendonly',
    'a=msid:parley video0',
    'a=rtcp-mux',
    'a=rtcp-rsize',
    'a=rtpmap:96 VP8/90000',
    'a=rtcp-fb:96 nack',
    'a=rtcp-fb:96 nack pli',
    'a=ssrc:2222 cname:parley',
    '',
  ].join('\r\n');
}

/**
 * This machine's first IPv4 address that is not loopback: where a Janus the
 * tests start gathers its candidates (Janus skips loopback), so a TURN server
 * relaying to it must listen and relay there too.
 */
export function ownAddress(): string {
  const found = Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal);
  if (!found) throw new Error('no IPv4 interface besides loopback: Janus has no address to gather candidates on');
  return found.address;
}

export interface OperatorJanus {
  url: string;
  apiSecret: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * A Janus as an operator runs one for JANUS_URLS: the generated
 * configuration, but no supervision by Parley (nothing restarts it, nothing
 * kills it when it hangs), so a test can freeze it, let it go, or leave it
 * behind as a crash would.
 */
export async function startOperatorJanus(options: { rtpPorts?: { min: number; max: number }; apiSecret?: string } = {}): Promise<OperatorJanus> {
  if (!janusInstalled()) throw new Error('janus is not installed: apt-get install janus janus-tools (.ci/run installs it)');
  const rtpPorts = options.rtpPorts ?? { min: nextPorts, max: nextPorts + 99 };
  if (!options.rtpPorts) nextPorts += 100;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-janus-'));
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const httpPort = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const apiSecret = options.apiSecret ?? 'test-janus-secret';
  const configFile = writeJanusConfig({ folder, httpPort, apiSecret, rtpPorts, publicAddress: null, interfaces: [], stunServer: null });
  const child = spawn('janus', ['-C', configFile, '-F', folder, '-o'], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${httpPort}/janus`;
  await eventually(() => janusAnswers(url, 500), 20_000, `janus answering at ${url}`);
  return {
    url,
    apiSecret,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}
