// The configuration of a Janus that Parley starts itself (docs/design.md,
// "Group calls through an SFU"): only the VideoRoom plugin and the HTTP
// transport on 127.0.0.1, every request signed with the API secret, the RTP
// port range and the NAT settings from Parley's own configuration. Pure text,
// so that it is tested without a Janus.
import fs from 'node:fs';
import path from 'node:path';

export interface LocalJanusSettings {
  /** Where the generated files go (configs_folder). */
  folder: string;
  /** Port of the HTTP API on 127.0.0.1 (Parley is its only client). */
  httpPort: number;
  apiSecret: string;
  rtpPorts: { min: number; max: number };
  /** nat_1_1_mapping: the public address host candidates are rewritten to behind a 1:1 NAT. */
  publicAddress: string | null;
  /** ice_enforce_list: the interfaces (or addresses) candidates are gathered on; empty = all but loopback. */
  interfaces: string[];
  /** STUN server Janus asks for its own reflexive address ("host:port"), or null. */
  stunServer: string | null;
}

/** Where Debian's package keeps the plugins and transports, read from its own janus.jcfg. */
export function janusFolders(systemConfig = '/etc/janus/janus.jcfg'): { plugins: string; transports: string } {
  const fallback = { plugins: '/usr/lib/x86_64-linux-gnu/janus/plugins', transports: '/usr/lib/x86_64-linux-gnu/janus/transports' };
  let text: string;
  try {
    text = fs.readFileSync(systemConfig, 'utf8');
  } catch {
    return fallback;
  }
  const folder = (key: string) => new RegExp(`^\\s*${key}\\s*=\\s*"([^"]+)"`, 'm').exec(text)?.[1];
  return { plugins: folder('plugins_folder') ?? fallback.plugins, transports: folder('transports_folder') ?? fallback.transports };
}

/** Every shared object of a folder but the one kept: Janus loads all it finds unless told not to. */
function allBut(folder: string, keep: string): string {
  let names: string[] = [];
  try {
    names = fs.readdirSync(folder).filter((name) => name.endsWith('.so'));
  } catch {
    // An unreadable folder loads nothing anyway.
  }
  return names.filter((name) => name !== keep).join(',');
}

const quoted = (value: string) => `"${value.replace(/["\\]/g, '')}"`;

/** The files of a generated configuration: name -> contents (libconfig syntax). */
export function janusConfigFiles(settings: LocalJanusSettings, folders = janusFolders()): Record<string, string> {
  const nat = [
    settings.publicAddress ? `  nat_1_1_mapping = ${quoted(settings.publicAddress)}\n  keep_private_host = true` : '',
    settings.interfaces.length ? `  ice_enforce_list = ${quoted(settings.interfaces.join(','))}` : '',
    settings.stunServer ? `  stun_server = ${quoted(settings.stunServer.split(':')[0]!)}\n  stun_port = ${Number(settings.stunServer.split(':')[1] ?? 3478)}` : '',
    // Browsers hide their host addresses behind mDNS names; a server never shares their LAN.
    '  ignore_mdns = true',
  ].filter(Boolean);
  return {
    'janus.jcfg': [
      'general: {',
      `  configs_folder = ${quoted(settings.folder)}`,
      `  plugins_folder = ${quoted(folders.plugins)}`,
      `  transports_folder = ${quoted(folders.transports)}`,
      '  debug_level = 3',
      `  api_secret = ${quoted(settings.apiSecret)}`,
      '  server_name = "parley-local"',
      // A session nobody polls or keeps alive goes after a minute: Parley's client keeps its own alive.
      '  session_timeout = 60',
      '}',
      'certificates: {',
      '}',
      'media: {',
      `  rtp_port_range = "${settings.rtpPorts.min}-${settings.rtpPorts.max}"`,
      '}',
      'nat: {',
      ...nat,
      '}',
      'plugins: {',
      `  disable = ${quoted(allBut(folders.plugins, 'libjanus_videoroom.so'))}`,
      '}',
      'transports: {',
      `  disable = ${quoted(allBut(folders.transports, 'libjanus_http.so'))}`,
      '}',
      'loggers: {',
      '  disable = "libjanus_jsonlog.so"',
      '}',
      'events: {',
      '  broadcast = false',
      '}',
      '',
    ].join('\n'),
    'janus.transport.http.jcfg': [
      'general: {',
      '  json = "plain"',
      '  base_path = "/janus"',
      '  http = true',
      `  port = ${settings.httpPort}`,
      '  ip = "127.0.0.1"',
      '  https = false',
      '}',
      'admin: {',
      '  admin_http = false',
      '  admin_https = false',
      '}',
      'cors: {',
      '}',
      '',
    ].join('\n'),
    // No rooms of its own: Parley creates each with a secret of its own.
    'janus.plugin.videoroom.jcfg': 'general: {\n}\n',
  };
}

export function writeJanusConfig(settings: LocalJanusSettings): string {
  fs.mkdirSync(settings.folder, { recursive: true });
  for (const [name, text] of Object.entries(janusConfigFiles(settings))) fs.writeFileSync(path.join(settings.folder, name), text, { mode: 0o600 });
  return path.join(settings.folder, 'janus.jcfg');
}
