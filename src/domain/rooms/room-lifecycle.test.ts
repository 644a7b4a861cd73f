import { describe, expect, it } from 'vitest';
import type { RoomStatus } from '../../db/schema.js';
import {
  CREATED_STATUS,
  acceptsParticipants,
  cleanupBase,
  deletionCutoff,
  graceWindowStart,
  isClosed,
  scheduledEnd,
  statusAfter,
  type LifecycleEvent,
} from './room-lifecycle.js';

const STATUSES: RoomStatus[] = ['active', 'started', 'ended', 'closed'];
const EVENTS: LifecycleEvent[] = ['participant-joined', 'grace-passed-empty', 'closed'];

describe('room lifecycle', () => {
  it('creates rooms active', () => {
    expect(CREATED_STATUS).toBe('active');
  });

  it('follows the transition table of docs/api.md', () => {
    const table = Object.fromEntries(STATUSES.map((status) => [status, Object.fromEntries(EVENTS.map((event) => [event, statusAfter(status, event)]))]));
    expect(table).toEqual({
      active: { 'participant-joined': 'started', 'grace-passed-empty': null, closed: 'closed' },
      started: { 'participant-joined': 'started', 'grace-passed-empty': 'ended', closed: 'closed' },
      // Someone joining an ended room starts it again.
      ended: { 'participant-joined': 'started', 'grace-passed-empty': null, closed: 'closed' },
      // Closed is final.
      closed: { 'participant-joined': null, 'grace-passed-empty': null, closed: null },
    });
  });

  it('lets participants into every room but a closed one', () => {
    expect(STATUSES.filter(acceptsParticipants)).toEqual(['active', 'started', 'ended']);
    expect(STATUSES.filter(isClosed)).toEqual(['closed']);
  });

  it('starts the grace window the grace before now', () => {
    const now = new Date('2026-03-10T12:00:15Z');
    expect(graceWindowStart(now, 15)).toEqual(new Date('2026-03-10T12:00:00Z'));
    expect(graceWindowStart(now, 0)).toEqual(now);
  });

  it('counts cleanup from the later of the scheduled end and the last activity', () => {
    const end = scheduledEnd(new Date('2026-03-10T12:00:00Z'), 30);
    expect(end).toEqual(new Date('2026-03-10T12:30:00Z'));
    expect(cleanupBase(end, new Date('2026-03-10T12:10:00Z'))).toEqual(end);
    expect(cleanupBase(end, new Date('2026-03-10T13:00:00Z'))).toEqual(new Date('2026-03-10T13:00:00Z'));
  });

  it('deletes rooms whose cleanup base is older than the retention', () => {
    expect(deletionCutoff(new Date('2026-04-09T12:00:00Z'), 30 * 86400)).toEqual(new Date('2026-03-10T12:00:00Z'));
  });
});
