// The raw files of a recording (docs/design.md, "Recording with consent"):
// what Janus 1.1.2's VideoRoom wrote for each recorded publication, found by
// name under the recording's folder and read by their MJR header.
//
// A name is `<peerId>-<kind>.<startedMs>-<audio|video|data>-<mindex>.mjr`
// (`Publisher.record` in src/sfu/video-room.ts); the header is "MJR00002",
// a 16-bit big-endian length and that much JSON: `t` the medium (a, v, d),
// `c` the codec, `s` when the file was made and `u` when its first packet was
// written (microseconds since the epoch). Packets follow, each after "MEET".
import fs from 'node:fs/promises';
import path from 'node:path';

export type Medium = 'audio' | 'video';

/** One `.mjr` file as its name tells it. */
export interface RecordedName {
  /** The publication it comes from: `<peerId>-<kind>` (one tile). */
  source: string;
  /** Which recording start of that publication (ms since the epoch when it was asked). */
  part: number;
  medium: Medium | 'data';
}

const NAME = /^(.+)\.(\d+)-(audio|video|data)-(\d+)\.mjr$/;

export function parseRecordedName(name: string): RecordedName | null {
  const found = NAME.exec(name);
  if (!found) return null;
  return { source: found[1]!, part: Number(found[2]), medium: found[3] as RecordedName['medium'] };
}

export interface MjrHeader {
  medium: Medium | 'data';
  codec: string;
  /** When its first packet was written (ms since the epoch); the file was made then if it has none. */
  startMs: number;
  /** Whether any packet follows the header (a publication that sent nothing has none). */
  hasPackets: boolean;
}

const MAGIC = 'MJR00002';
const MEDIA: Record<string, MjrHeader['medium']> = { a: 'audio', v: 'video', d: 'data' };

/** The header of an MJR file from its first bytes; null when it is not one (an old MJR00001, or cut short). */
export function parseMjrHeader(bytes: Buffer, fileSize: number): MjrHeader | null {
  if (bytes.length < 10 || bytes.subarray(0, 8).toString('latin1') !== MAGIC) return null;
  const length = bytes.readUInt16BE(8);
  if (bytes.length < 10 + length) return null;
  let json: { t?: unknown; c?: unknown; s?: unknown; u?: unknown };
  try {
    json = JSON.parse(bytes.subarray(10, 10 + length).toString('utf8'));
  } catch {
    return null;
  }
  const medium = MEDIA[String(json.t)];
  const started = typeof json.u === 'number' && json.u > 0 ? json.u : json.s;
  if (!medium || typeof json.c !== 'string' || typeof started !== 'number') return null;
  return { medium, codec: json.c, startMs: started / 1000, hasPackets: fileSize > 10 + length + 4 };
}

/** A recorded medium with something in it. */
export interface RecordedMedium extends RecordedName, MjrHeader {
  file: string;
  medium: Medium;
}

/** What was found under a recording's folder: the usable media, and the files left out with why. */
export interface RecordedMedia {
  media: RecordedMedium[];
  skipped: { file: string; why: string }[];
}

const HEADER_BYTES = 2 + 8 + 65_535;
const CODECS: Record<Medium, string[]> = { audio: ['opus'], video: ['vp8', 'vp9'] };

async function readHeader(file: string): Promise<{ header: MjrHeader | null; size: number }> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(Math.min(size, HEADER_BYTES)), 0, Math.min(size, HEADER_BYTES), 0);
    return { header: parseMjrHeader(buffer.subarray(0, bytesRead), size), size };
  } finally {
    await handle.close();
  }
}

/** Every `.mjr` under `rawDir` (its subfolders too), the usable ones in order of their start. */
export async function listRecordedMedia(rawDir: string): Promise<RecordedMedia> {
  const entries = await fs.readdir(rawDir, { recursive: true, withFileTypes: true });
  const found: RecordedMedia = { media: [], skipped: [] };
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.mjr')) continue;
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const name = parseRecordedName(entry.name);
    if (!name) {
      found.skipped.push({ file, why: 'not named <peerId>-<kind>.<startedMs>-<medium>-<mindex>.mjr' });
      continue;
    }
    const { header } = await readHeader(file);
    if (!header) found.skipped.push({ file, why: 'no MJR00002 header' });
    else if (header.medium === 'data') found.skipped.push({ file, why: 'data channel' });
    else if (!header.hasPackets) found.skipped.push({ file, why: 'no packets' });
    else if (!CODECS[header.medium].includes(header.codec)) found.skipped.push({ file, why: `codec ${header.codec}` });
    else found.media.push({ ...name, ...header, medium: header.medium, file });
  }
  found.media.sort((a, b) => a.startMs - b.startMs || a.file.localeCompare(b.file));
  return found;
}
