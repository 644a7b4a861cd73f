// The recording's grid and ffmpeg filter graph (docs/design.md, "Recording with consent"), without ffmpeg.
import { describe, expect, it } from 'vitest';
import { compositionFilter, gridFor, tileRects } from './grid.js';

describe('the grid of a recording', () => {
  it('is 1 tile, 2 side by side, then 2x2, 3x2, 3x3, like the call', () => {
    const shapes = [1, 2, 3, 4, 5, 6, 7, 9, 10].map((n) => `${gridFor(n).columns}x${gridFor(n).rows}`);
    expect(shapes).toEqual(['1x1', '2x1', '2x2', '2x2', '3x2', '3x2', '3x3', '3x3', '4x3']);
    expect(gridFor(0)).toEqual({ columns: 1, rows: 1 });
  });

  it('fills the picture with even-sized tiles, the last row centred', () => {
    expect(tileRects(1, 1280, 720)).toEqual([{ x: 0, y: 0, width: 1280, height: 720 }]);
    expect(tileRects(2, 1280, 720)).toEqual([
      { x: 0, y: 0, width: 640, height: 720 },
      { x: 640, y: 0, width: 640, height: 720 },
    ]);
    const three = tileRects(3, 1280, 720);
    expect(three.map((r) => [r.x, r.y])).toEqual([
      [0, 0],
      [640, 0],
      [320, 360],
    ]);
    for (const rect of tileRects(7, 1000, 562)) {
      expect(rect.width % 2).toBe(0);
      expect(rect.height % 2).toBe(0);
      expect(rect.x + rect.width).toBeLessThanOrEqual(1000);
      expect(rect.y + rect.height).toBeLessThanOrEqual(562);
    }
  });
});

describe('the filter graph', () => {
  const base = { width: 1280, height: 720, fps: 15, durationSeconds: 12.5 };

  it('lays each video over its tile from its offset and mixes every voice delayed by its own', () => {
    const graph = compositionFilter({
      ...base,
      tiles: 2,
      videos: [
        { input: 1, tile: 0, offsetSeconds: 0 },
        { input: 3, tile: 1, offsetSeconds: 4.25 },
      ],
      audios: [
        { input: 0, offsetSeconds: 0.02 },
        { input: 2, offsetSeconds: 4.2 },
      ],
    });
    expect(graph).toContain('color=c=black:s=1280x720:r=15:d=12.500');
    expect(graph).toContain('[1:v]setpts=PTS+0.000/TB,scale=w=640:h=720');
    expect(graph).toContain('[3:v]setpts=PTS+4.250/TB');
    expect(graph).toContain('[base1][v1]overlay=x=640:y=0:eof_action=pass');
    expect(graph).toContain('[0:a]aresample=48000:async=1000,aformat=channel_layouts=stereo,adelay=20:all=1[a0]');
    expect(graph).toContain('adelay=4200:all=1[a1]');
    expect(graph).toContain('[silence][a0][a1]amix=inputs=3:duration=first');
    expect(graph).toMatch(/\[base2\]null\[vout\]/);
    expect(graph).toMatch(/normalize=0,alimiter=limit=0.7:level=false\[aout\]$/);
  });

  it('still has a picture and a sound when only a voice or only a picture was recorded', () => {
    const voice = compositionFilter({ ...base, tiles: 1, videos: [], audios: [{ input: 0, offsetSeconds: 0 }] });
    expect(voice).toContain('[base0]null[vout]');
    const picture = compositionFilter({ ...base, tiles: 1, videos: [{ input: 0, tile: 0, offsetSeconds: 0 }], audios: [] });
    expect(picture).toContain('[silence]amix=inputs=1:duration=first');
  });

  it('refuses a video placed on a tile that does not exist', () => {
    expect(() => compositionFilter({ ...base, tiles: 1, videos: [{ input: 0, tile: 1, offsetSeconds: 0 }], audios: [] })).toThrow(/tile 1 of 1/);
  });
});
