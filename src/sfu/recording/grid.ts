// The picture of a recording (docs/design.md, "Recording with consent"): a
// grid like the call's, one tile per recorded publication (a camera, a
// screen), every voice mixed; as ffmpeg's filter graph, a pure function of
// what was recorded and when. Each medium is placed at its start from the
// recording's beginning: a tile is black until its publication starts and
// after it ends, and a publication recorded in several parts fills the same tile.

export interface Grid {
  columns: number;
  rows: number;
}

/** 1 tile, 2 side by side, 3-4 as 2x2, 5-6 as 3x2, 7-9 as 3x3, and so on. */
export function gridFor(tiles: number): Grid {
  const columns = Math.max(1, Math.ceil(Math.sqrt(tiles)));
  return { columns, rows: Math.max(1, Math.ceil(tiles / columns)) };
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

const even = (n: number) => Math.max(2, Math.floor(n / 2) * 2);

/** Where each tile goes in a picture of `width` x `height`; an incomplete last row is centred, as on the page. */
export function tileRects(tiles: number, width: number, height: number): Rect[] {
  const { columns, rows } = gridFor(tiles);
  const tileWidth = even(width / columns);
  const tileHeight = even(height / rows);
  const top = Math.floor((height - rows * tileHeight) / 2);
  return Array.from({ length: tiles }, (_, i) => {
    const row = Math.floor(i / columns);
    const inRow = row === rows - 1 ? tiles - row * columns : columns;
    const left = Math.floor((width - inRow * tileWidth) / 2);
    return { x: left + (i % columns) * tileWidth, y: top + row * tileHeight, width: tileWidth, height: tileHeight };
  });
}

export interface PlacedVideo {
  /** ffmpeg's input index of the video file. */
  input: number;
  /** Which tile it fills. */
  tile: number;
  /** Seconds from the recording's beginning to the file's start. */
  offsetSeconds: number;
}

export interface PlacedAudio {
  input: number;
  offsetSeconds: number;
}

export interface Composition {
  width: number;
  height: number;
  fps: number;
  /** The whole recording: from the first medium's start to the last one's end. */
  durationSeconds: number;
  tiles: number;
  videos: PlacedVideo[];
  audios: PlacedAudio[];
}

const seconds = (s: number) => Math.max(0, s).toFixed(3);

/**
 * The filter graph (`-filter_complex`) that makes `[vout]` and `[aout]`: a black
 * picture and silence of the whole duration, each video scaled into its tile
 * (its shape kept, padded) and laid over it from its offset, each audio
 * delayed by its offset and mixed in at its own level. Always one video and
 * one audio stream, whatever was recorded.
 */
export function compositionFilter(c: Composition): string {
  const rects = tileRects(c.tiles, c.width, c.height);
  const duration = seconds(c.durationSeconds);
  const chains = [`color=c=black:s=${c.width}x${c.height}:r=${c.fps}:d=${duration},format=yuv420p[base0]`];
  c.videos.forEach((video, i) => {
    const rect = rects[video.tile];
    if (!rect) throw new Error(`tile ${video.tile} of ${c.tiles}`);
    chains.push(
      `[${video.input}:v]setpts=PTS+${seconds(video.offsetSeconds)}/TB,` +
        `scale=w=${rect.width}:h=${rect.height}:force_original_aspect_ratio=decrease:force_divisible_by=2,` +
        `pad=w=${rect.width}:h=${rect.height}:x=(ow-iw)/2:y=(oh-ih)/2:color=black,setsar=1[v${i}]`,
      `[base${i}][v${i}]overlay=x=${rect.x}:y=${rect.y}:eof_action=pass:repeatlast=0[base${i + 1}]`,
    );
  });
  chains.push(`[base${c.videos.length}]null[vout]`);
  chains.push(`anullsrc=r=48000:cl=stereo,atrim=duration=${duration}[silence]`);
  c.audios.forEach((audio, i) => {
    const delayMs = Math.round(Math.max(0, audio.offsetSeconds) * 1000);
    // async: a gap in the packets (a muted microphone sends none) becomes silence instead of pulling what follows earlier.
    chains.push(`[${audio.input}:a]aresample=48000:async=1000,aformat=channel_layouts=stereo,adelay=${delayMs}:all=1[a${i}]`);
  });
  const mixed = ['[silence]', ...c.audios.map((_, i) => `[a${i}]`)].join('');
  // normalize=0: each voice at its own level (a mix divided by the number of inputs would make one speaker quiet);
  // the limiter keeps two people speaking at once from clipping (two fake microphones' beeps summed peaked at +1.7 dBFS;
  // at 0.9 the Opus file still peaked at +0.1 dBFS, its coding overshooting by about a decibel).
  chains.push(`${mixed}amix=inputs=${c.audios.length + 1}:duration=first:dropout_transition=0:normalize=0,alimiter=limit=0.7:level=false[aout]`);
  return chains.join(';\n');
}
