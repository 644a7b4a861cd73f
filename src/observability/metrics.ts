// Prometheus metrics (GET /metrics): HTTP latency per route, rooms by status,
// connected participants, signaling messages, the database pool and job runs.
// Gauges that need the database are read at scrape time and cached briefly,
// so a scraper cannot turn into load.
import client from 'prom-client';

export interface MetricsSources {
  /** Rooms per status, across the cluster. */
  roomsByStatus(): Promise<Record<string, number>>;
  /** Participants connected now, across the cluster. */
  connectedParticipants(): Promise<number>;
  /** Connections of the pool, where the database has one (PostgreSQL). */
  poolStats?(): { total: number; idle: number; waiting: number };
}

const CACHE_MS = 10_000;

function cached<T>(read: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | null = null;
  let at = 0;
  return () => {
    if (!value || Date.now() - at > CACHE_MS) {
      at = Date.now();
      value = read().catch((error: unknown) => {
        at = 0; // retry at the next scrape
        throw error;
      });
    }
    return value;
  };
}

/** What /metrics reads from the API's concurrency gate. */
interface GateReading {
  limit(): number;
  waiting(): number;
}

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'parley_' });

  const httpDuration = new client.Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const signalingMessages = new client.Counter({
    name: 'parley_signaling_messages_total',
    help: 'Signaling frames received from participants, by message type',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const jobRuns = new client.Counter({
    name: 'parley_job_runs_total',
    help: 'Runs of periodic jobs by outcome',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  let connectionsOpen = 0;
  new client.Gauge({
    name: 'parley_node_connections',
    help: 'WebSocket connections open on this node',
    registers: [registry],
    collect() {
      this.set(connectionsOpen);
    },
  });

  // The API's concurrency gate (src/http/hooks/concurrency-gate.ts, calls-first.ts), read at scrape time; 0 without one.
  let apiGate: GateReading | null = null;
  new client.Gauge({
    name: 'parley_api_concurrency_limit',
    help: 'API requests this node works on at once now (API_CONCURRENCY, lower while calls need the event loop)',
    registers: [registry],
    collect() {
      this.set(apiGate?.limit() ?? 0);
    },
  });
  new client.Gauge({
    name: 'parley_api_requests_waiting',
    help: 'API requests waiting for their turn at the concurrency gate',
    registers: [registry],
    collect() {
      this.set(apiGate?.waiting() ?? 0);
    },
  });

  // Redis, where the node uses it (docs/deploy.md, "What happens when…").
  const redisUp = new client.Gauge({ name: 'parley_redis_up', help: '1 while this node is connected to Redis (only with REDIS_URL)', registers: [registry] });
  const redisResubscriptions = new client.Counter({ name: 'parley_redis_resubscriptions_total', help: 'Room channels subscribed again after Redis came back', registers: [registry] });
  const busPublishFailures = new client.Counter({ name: 'parley_bus_publish_failures_total', help: 'Messages Redis did not take (a chat sender is told; signaling reaches this node only)', registers: [registry] });

  return {
    registry,
    redisUp,
    redisResubscriptions,
    busPublishFailures,
    httpDuration,
    signalingMessages,
    jobRuns,
    /** A WebSocket opened (+1) or closed (-1) on this node. */
    connectionsChanged(delta: number) {
      connectionsOpen += delta;
    },
    /** WebSocket connections open on this node now (calls-first.ts reads it every window). */
    connectionsOpen: () => connectionsOpen,
    /** The API's concurrency gate, whose limit and queue the scrape reads. */
    watchApiGate(gate: GateReading) {
      apiGate = gate;
    },
    /** Adds the gauges that read the database; call once the sources exist. */
    addSources(sources: MetricsSources) {
      const rooms = cached(sources.roomsByStatus);
      const participants = cached(sources.connectedParticipants);
      new client.Gauge({
        name: 'parley_rooms',
        help: 'Rooms by status (cached for 10 s)',
        labelNames: ['status'] as const,
        registers: [registry],
        async collect() {
          const counts = await rooms();
          for (const status of ['active', 'started', 'ended', 'closed']) this.set({ status }, counts[status] ?? 0);
        },
      });
      new client.Gauge({
        name: 'parley_participants_connected',
        help: 'Participants connected now, across the cluster (cached for 10 s)',
        registers: [registry],
        async collect() {
          this.set(await participants());
        },
      });
      const pool = sources.poolStats;
      if (pool) {
        new client.Gauge({
          name: 'parley_db_pool_connections',
          help: 'Database pool connections by state',
          labelNames: ['state'] as const,
          registers: [registry],
          collect() {
            const stats = pool();
            this.set({ state: 'total' }, stats.total);
            this.set({ state: 'idle' }, stats.idle);
            this.set({ state: 'waiting' }, stats.waiting);
          },
        });
      }
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
