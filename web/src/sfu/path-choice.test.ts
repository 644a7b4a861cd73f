// The media path follows the number of people (docs/design.md, "Group calls through an SFU").
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPathChoice, type MediaPath } from './path-choice.js';
import { layerFor } from './layers.js';

afterEach(() => vi.useRealTimers());

describe('the media path', () => {
  it('goes to the SFU at once from the threshold, and back only after the room stayed below it for a while', () => {
    vi.useFakeTimers();
    const changes: MediaPath[] = [];
    const choice = createPathChoice(3, (path) => changes.push(path), 8000);
    choice.count(2);
    expect(choice.path).toBe('mesh');
    choice.count(3);
    expect(changes).toEqual(['sfu']);
    // Someone drops and comes back within the while: nothing moves.
    choice.count(2);
    vi.advanceTimersByTime(5000);
    choice.count(3);
    vi.advanceTimersByTime(10_000);
    expect(changes).toEqual(['sfu']);
    choice.count(2);
    vi.advanceTimersByTime(7999);
    expect(choice.path).toBe('sfu');
    vi.advanceTimersByTime(1);
    expect(changes).toEqual(['sfu', 'mesh']);
  });

  it('takes a call of two through the SFU while it is recorded, and back only after the wait once it is not', () => {
    vi.useFakeTimers();
    const changes: MediaPath[] = [];
    const choice = createPathChoice(3, (path) => changes.push(path), 8000);
    choice.count(2);
    choice.recording(true);
    expect(changes).toEqual(['sfu']);
    // A peer-to-peer offer from a page that has not heard of the recording yet does not take it down.
    choice.downNow();
    choice.count(2);
    vi.advanceTimersByTime(20_000);
    expect(choice.path).toBe('sfu');
    choice.recording(false);
    vi.advanceTimersByTime(7999);
    expect(choice.path).toBe('sfu');
    vi.advanceTimersByTime(1);
    expect(changes).toEqual(['sfu', 'mesh']);
  });

  it('follows another page that went back first, but only below the threshold', () => {
    const changes: MediaPath[] = [];
    const choice = createPathChoice(3, (path) => changes.push(path), 60_000);
    choice.count(4);
    choice.downNow();
    expect(choice.path).toBe('sfu');
    choice.count(2);
    choice.downNow();
    expect(changes).toEqual(['sfu', 'mesh']);
    choice.stop();
  });
});

describe('the layer a tile asks for', () => {
  it('is the small one for a thumbnail, the full one for a large tile', () => {
    expect(layerFor(160)).toBe(0);
    expect(layerFor(320)).toBe(0);
    expect(layerFor(640)).toBe(1);
    // A thumbnail on a phone's dense screen needs more pixels.
    expect(layerFor(200, 2)).toBe(1);
  });
});
