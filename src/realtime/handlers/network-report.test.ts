// The network-report handler over the real participation service: what the
// browser reports becomes the session's network summary (GET .../sessions).
import { describe, expect, it } from 'vitest';
import { dispatch } from '../dispatch.js';
import { useHubFixture } from '../hub.test-support.js';
import { parseClientMessage } from '../../shared/protocol.js';

const hub = useHubFixture();

const report = (rttMs: number | null, lossPercent: number | null, bitrateKbps: number | null, relayed: boolean | null) =>
  ({ type: 'network-report', rttMs, lossPercent, bitrateKbps, relayed }) as const;

async function sessions(roomToken: string) {
  return (await hub().api('GET', `/api/rooms/${roomToken}/sessions`)).json().sessions as { participant_token: string; network: unknown }[];
}

describe('network-report', () => {
  it('is stored and summarised: medians of round trip and bitrate, mean loss, relayed if any report was; no reply', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    host.connection.sent.length = 0;
    for (const [rtt, loss, kbps, relayed] of [
      [40, 0, 1200, false],
      [60, 1, 1000, false],
      [900, 5, 100, true],
    ] as const) {
      await dispatch(hub().ctx, host.session, report(rtt, loss, kbps, relayed));
      hub().clock.advance(10_000);
    }
    expect(host.connection.sent).toEqual([]);
    const listed = await sessions(room.token);
    expect(listed.find((s) => s.participant_token === host.joined.participantToken)?.network).toEqual({
      rtt_ms: 60,
      loss_percent: 2,
      bitrate_kbps: 1000,
      relayed: true,
      reports: 3,
    });
    expect(listed.find((s) => s.participant_token === guest.joined.participantToken)?.network).toBeNull();
  });

  it('figures a browser does not report stay null; floats are rounded', async () => {
    const { room, guest } = await hub().hostAndGuest();
    await dispatch(hub().ctx, guest.session, report(33.6, 0.5, null, null));
    const mine = (await sessions(room.token)).find((s) => s.participant_token === guest.joined.participantToken);
    expect(mine?.network).toEqual({ rtt_ms: 34, loss_percent: 0.5, bitrate_kbps: null, relayed: null, reports: 1 });
  });

  it('drops reports beyond the rate', async () => {
    const { room, host } = await hub().hostAndGuest();
    for (let i = 0; i < 10; i++) await dispatch(hub().ctx, host.session, report(50, 0, 800, false));
    const mine = (await sessions(room.token)).find((s) => s.participant_token === host.joined.participantToken);
    expect(mine?.network).toMatchObject({ reports: 3 });
  });

  it('is refused from a connection that has not joined', async () => {
    const stranger = hub().connect();
    await dispatch(hub().ctx, stranger.session, report(50, 0, 800, false));
    expect(stranger.connection.sent).toEqual([{ type: 'error', code: 'not-joined', message: 'Send join first' }]);
  });
});

describe('parsing a network-report', () => {
  it.each([
    [{ rttMs: -1, lossPercent: 0, bitrateKbps: 0, relayed: false }],
    [{ rttMs: 10, lossPercent: 101, bitrateKbps: 0, relayed: false }],
    [{ rttMs: 10, lossPercent: 0, bitrateKbps: 'fast', relayed: false }],
    [{ rttMs: 10, lossPercent: 0, bitrateKbps: 1e300, relayed: false }],
    [{ rttMs: 10, lossPercent: 0, bitrateKbps: 0, relayed: 'yes' }],
    [{ lossPercent: 0, bitrateKbps: 0, relayed: false }],
  ])('refuses %j', (fields) => {
    expect(parseClientMessage(JSON.stringify({ type: 'network-report', ...fields }))).toMatchObject({ ok: false, code: 'bad-request' });
  });

  it('keeps only the four figures', () => {
    expect(parseClientMessage(JSON.stringify({ type: 'network-report', rttMs: 1, lossPercent: 0, bitrateKbps: null, relayed: true, extra: { x: 1 } }))).toEqual({
      ok: true,
      message: { type: 'network-report', rttMs: 1, lossPercent: 0, bitrateKbps: null, relayed: true },
    });
  });
});
