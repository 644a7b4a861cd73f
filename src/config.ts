// The only reader of process.env. loadConfig validates every setting once at
// start-up and fails with a message naming the variable (docs/design.md#commands-and-configuration).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  databasePoolSize: number;
  /**
   * API requests worked on at once on this node, 0 = no bound; the others wait
   * their turn (http/hooks/concurrency-gate.ts). Keeps the event loop's turns,
   * which the call's signaling shares, short under an integrator's burst. By
   * default the database pool's size: no more requests at work than it serves at once.
   */
  apiConcurrency: number;
  /** Named statements for the hottest queries (db/prepared.ts); off for a pooler that cannot keep them. */
  databasePreparedStatements: boolean;
  adminToken: string | null;
  logLevel: string;
  nodeId: string;
  /** Delete non-permanent rooms this long after their scheduled end or last activity. */
  cleanupAfterSeconds: number;
  cleanupIntervalSeconds: number;
  /** How often the embedded database is checked for tables to VACUUM or ANALYZE and WAL to checkpoint (db/embedded-maintenance.ts; PGlite only). */
  embeddedMaintenanceIntervalSeconds: number;
  /** A room with nobody in it becomes `ended` after this grace (reconnects within it keep it started). */
  roomEndGraceSeconds: number;
  /**
   * A participant whose connection dropped (not one who left) stays in the
   * call this long while its browser reconnects: the others see it as
   * reconnecting, not gone, and `current_participants` keeps it.
   */
  reconnectGraceSeconds: number;
  /** How often a node records that it is alive, and when its participants count as gone. */
  heartbeatIntervalSeconds: number;
  nodeDeadAfterSeconds: number;
  iceServers: IceServer[];
  turnSecret: string | null;
  turnUrls: string[];
  turnTtlSeconds: number;
  redisUrl: string | null;
  trustProxy: boolean;
  /** Origins whose pages may open the signaling WebSocket: PUBLIC_URL's, plus ALLOWED_ORIGINS. */
  allowedOrigins: string[];
  /** 'relay' sends all media through TURN (hides participants' addresses from each other). */
  iceTransportPolicy: 'all' | 'relay';
  /**
   * Where the call's signaling runs: 'separate', a process of its own beside
   * the API's (src/calls-process/), so that API load cannot stall it; or
   * 'inline', in the one process.
   */
  callsProcess: 'separate' | 'inline';
  /** Requests per minute per API token on /api (a burst of this many, refilled evenly); 0 = no limit. */
  rateLimitPerMinute: number;
  /** Webhook targets on loopback, private or link-local addresses are refused unless this is on (docs/webhooks.md). */
  webhooksAllowPrivateNetworks: boolean;
  /** How long one delivery may take, connecting included. */
  webhooksTimeoutSeconds: number;
  /** An endpoint whose every delivery failed for this long is disabled. */
  webhooksDisableAfterSeconds: number;
  /** How often each node looks for webhook messages due (the delay of a new event at most). */
  webhooksPollIntervalSeconds: number;
  /** Group calls through Janus (docs/design.md, "Group calls through an SFU"); 'off' keeps every room peer to peer. */
  sfu: 'off' | 'janus';
  /** Why `sfu` is what it is: SFU set, or its default (a `janus` on PATH, none, or REDIS_URL without JANUS_URLS). */
  sfuBecause: 'set' | 'janus-installed' | 'no-janus' | 'redis-without-janus-urls';
  /** Janus instances run by the operator (their HTTP API URLs); empty with `sfu: 'janus'`: Parley starts a local one. */
  janusUrls: string[];
  /** Janus's api_secret, sent with every request; a local Janus gets a random one when unset. */
  janusApiSecret: string | null;
  /** From this many people in the call, its media goes through the SFU. */
  sfuMinParticipants: number;
  /** One below SFU_MIN_PARTICIPANTS the pages keep their SFU path warm (docs/design.md, "Group calls through an SFU", Warm path). */
  sfuWarm: boolean;
  /** A room whose VideoRoom nobody on this node has used for this long loses it (its call ended, or went back to peer to peer). */
  sfuEmptyRoomSeconds: number;
  /** A room whose Janus was lost and that no instance took within this long is lost: its recording ends. */
  sfuLostRoomSeconds: number;
  /** The UDP ports a local Janus uses for media (rtp_port_range). */
  janusRtpPorts: { min: number; max: number };
  /** The public address of a local Janus behind a 1:1 NAT (nat_1_1_mapping), or null. */
  janusPublicIp: string | null;
  /** The interfaces a local Janus gathers candidates on (ice_enforce_list); empty: all but loopback. */
  janusInterfaces: string[];
  /** Where recordings are written and served from (docs/design.md, "Recording with consent"); in a cluster, storage every node and Janus see. */
  recordingsDir: string;
  /** A recording is deleted this long after it started. */
  recordingRetentionSeconds: number;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  return url.toString().replace(/\/+$/, '');
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function iceServers(env: Env): IceServer[] {
  const raw = env.ICE_SERVERS;
  if (raw === undefined || raw === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('ICE_SERVERS', 'must be a JSON array like [{"urls":"stun:stun.example.org:3478"}]');
  }
  if (!Array.isArray(parsed)) throw new ConfigError('ICE_SERVERS', 'must be a JSON array');
  return parsed.map((entry, index) => {
    const urls = (entry as IceServer | null)?.urls;
    const valid = typeof urls === 'string' || (Array.isArray(urls) && urls.length > 0 && urls.every((u) => typeof u === 'string'));
    if (!valid) throw new ConfigError('ICE_SERVERS', `entry ${index} needs "urls" (a string or an array of strings)`);
    const { username, credential } = entry as IceServer;
    return { urls, ...(username ? { username } : {}), ...(credential ? { credential } : {}) };
  });
}

function portRange(env: Env): { min: number; max: number } {
  const raw = env.JANUS_RTP_PORTS || '20000-40000';
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(raw.trim());
  const [min, max] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
  if (!(min >= 1024 && max <= 65535 && min < max)) throw new ConfigError('JANUS_RTP_PORTS', `must be a range like 20000-40000 within 1024-65535, got "${raw}"`);
  return { min, max };
}

/** Whether a `janus` binary is on this search path (SFU's default: docs/design.md, "Group calls through an SFU"). */
export function janusInstalled(binary = 'janus', searchPath = process.env.PATH ?? ''): boolean {
  if (binary.includes('/')) return fs.existsSync(binary);
  return searchPath.split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, binary)));
}

/**
 * SFU and JANUS_URLS. Unset, SFU is `janus` when a `janus` binary is on PATH,
 * except with REDIS_URL and no JANUS_URLS (a local Janus serves one node);
 * `sfuBecause` says which, for the start's log line.
 */
function sfuSettings(env: Env): Pick<Config, 'sfu' | 'sfuBecause' | 'janusUrls'> {
  const janusUrls = (env.JANUS_URLS ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)
    .map((u) => httpUrl('JANUS_URLS', u));
  const sfuBecause: Config['sfuBecause'] = env.SFU ? 'set' : !janusInstalled('janus', env.PATH ?? '') ? 'no-janus' : env.REDIS_URL && !janusUrls.length ? 'redis-without-janus-urls' : 'janus-installed';
  const sfu = env.SFU || (sfuBecause === 'janus-installed' ? 'janus' : 'off');
  if (sfu !== 'off' && sfu !== 'janus') throw new ConfigError('SFU', `must be "off" or "janus", got "${sfu}"`);
  if (janusUrls.length && sfu === 'off') throw new ConfigError('JANUS_URLS', 'is set but SFU is "off": set SFU=janus to use them');
  // A local Janus is this node's alone: nodes sharing calls through Redis must share their instances too.
  if (sfu === 'janus' && !janusUrls.length && env.REDIS_URL) throw new ConfigError('JANUS_URLS', 'must list the Janus instances every node shares when REDIS_URL is set (a local Janus serves one node)');
  return { sfu, sfuBecause, janusUrls };
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const adminToken = env.PARLEY_ADMIN_TOKEN || null;
  if (adminToken !== null && adminToken.length < 16) {
    throw new ConfigError('PARLEY_ADMIN_TOKEN', 'must be at least 16 characters long');
  }
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgres:// or postgresql://');
  }
  const redisUrl = env.REDIS_URL || null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://');
  }
  const turnSecret = env.TURN_SECRET || null;
  const turnUrls = (env.TURN_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  if (turnUrls.some((u) => !/^turns?:/.test(u))) throw new ConfigError('TURN_URLS', 'must be a comma-separated list of turn: or turns: URLs');
  if ((turnSecret === null) !== (turnUrls.length === 0)) {
    throw new ConfigError(turnSecret === null ? 'TURN_SECRET' : 'TURN_URLS', 'must be set together with ' + (turnSecret === null ? 'TURN_URLS' : 'TURN_SECRET'));
  }
  const publicUrl = httpUrl('PUBLIC_URL', env.PUBLIC_URL || `http://localhost:${port}`);
  const extraOrigins = (env.ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => new URL(httpUrl('ALLOWED_ORIGINS', o)).origin);
  const callsProcess = env.CALLS_PROCESS || 'separate';
  if (callsProcess !== 'separate' && callsProcess !== 'inline') {
    throw new ConfigError('CALLS_PROCESS', `must be "separate" or "inline", got "${callsProcess}"`);
  }
  const iceTransportPolicy = env.ICE_TRANSPORT_POLICY || 'all';
  if (iceTransportPolicy !== 'all' && iceTransportPolicy !== 'relay') {
    throw new ConfigError('ICE_TRANSPORT_POLICY', `must be "all" or "relay", got "${iceTransportPolicy}"`);
  }
  const configuredIce = iceServers(env);
  if (iceTransportPolicy === 'relay' && turnSecret === null && !configuredIce.some((s) => [s.urls].flat().some((u) => /^turns?:/.test(u)))) {
    throw new ConfigError('ICE_TRANSPORT_POLICY', 'is "relay" but no TURN server is configured (TURN_URLS and TURN_SECRET, or ICE_SERVERS)');
  }
  const databasePoolSize = integer(env, 'DATABASE_POOL_SIZE', 20, 1, 1000);
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const config: Config = {
    port,
    host: env.HOST || '127.0.0.1',
    publicUrl,
    dataDir,
    databaseUrl,
    databasePoolSize,
    apiConcurrency: integer(env, 'API_CONCURRENCY', databasePoolSize, 0, 10_000),
    databasePreparedStatements: boolean(env, 'DATABASE_PREPARED_STATEMENTS', true),
    adminToken,
    logLevel: env.LOG_LEVEL || 'info',
    nodeId: env.NODE_ID || randomUUID(),
    cleanupAfterSeconds: integer(env, 'CLEANUP_AFTER_DAYS', 30, 0, 36500) * 86400,
    cleanupIntervalSeconds: integer(env, 'CLEANUP_INTERVAL_SECONDS', 3600, 1, 86400 * 7),
    embeddedMaintenanceIntervalSeconds: integer(env, 'EMBEDDED_MAINTENANCE_INTERVAL_SECONDS', 60, 1, 86400),
    roomEndGraceSeconds: integer(env, 'ROOM_END_GRACE_SECONDS', 15, 0, 3600),
    reconnectGraceSeconds: integer(env, 'RECONNECT_GRACE_SECONDS', 20, 0, 600),
    heartbeatIntervalSeconds: integer(env, 'HEARTBEAT_INTERVAL_SECONDS', 2, 1, 60),
    nodeDeadAfterSeconds: integer(env, 'NODE_DEAD_AFTER_SECONDS', 6, 2, 600),
    iceServers: configuredIce,
    turnSecret,
    turnUrls,
    turnTtlSeconds: integer(env, 'TURN_TTL_SECONDS', 3600, 10, 86400),
    redisUrl,
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    allowedOrigins: [...new Set([new URL(publicUrl).origin, ...extraOrigins])],
    iceTransportPolicy,
    callsProcess,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 0, 1_000_000),
    webhooksAllowPrivateNetworks: boolean(env, 'WEBHOOKS_ALLOW_PRIVATE_NETWORKS', false),
    webhooksTimeoutSeconds: integer(env, 'WEBHOOKS_TIMEOUT_SECONDS', 10, 1, 30),
    webhooksDisableAfterSeconds: integer(env, 'WEBHOOKS_DISABLE_AFTER_DAYS', 5, 1, 365) * 86400,
    webhooksPollIntervalSeconds: integer(env, 'WEBHOOKS_POLL_INTERVAL_SECONDS', 1, 1, 60),
    ...sfuSettings(env),
    janusApiSecret: env.JANUS_API_SECRET || null,
    sfuMinParticipants: integer(env, 'SFU_MIN_PARTICIPANTS', 3, 2, 100),
    sfuWarm: boolean(env, 'SFU_WARM', false),
    sfuEmptyRoomSeconds: integer(env, 'SFU_EMPTY_ROOM_SECONDS', 60, 1, 86_400),
    sfuLostRoomSeconds: integer(env, 'SFU_LOST_ROOM_SECONDS', 30, 1, 3600),
    janusRtpPorts: portRange(env),
    janusPublicIp: env.JANUS_PUBLIC_IP || null,
    janusInterfaces: (env.JANUS_INTERFACES ?? '').split(',').map((i) => i.trim()).filter(Boolean),
    recordingsDir: path.resolve(env.RECORDINGS_DIR || path.join(dataDir, 'recordings')),
    recordingRetentionSeconds: integer(env, 'RECORDING_RETENTION_DAYS', 30, 1, 36500) * 86400,
  };
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent; got "${config.logLevel}"`);
  }
  return Object.freeze(config);
}

/** What `parley admin` needs to reach a running server's admin API. */
export interface AdminClientConfig {
  url: string;
  adminToken: string;
}

export function loadAdminClientConfig(env: Env = process.env): Readonly<AdminClientConfig> {
  const adminToken = env.PARLEY_ADMIN_TOKEN;
  if (!adminToken) throw new ConfigError('PARLEY_ADMIN_TOKEN', 'is not set: give the admin token the server was started with');
  return Object.freeze({ url: httpUrl('PARLEY_URL', env.PARLEY_URL || 'http://localhost:3000'), adminToken });
}
