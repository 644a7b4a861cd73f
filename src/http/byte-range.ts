// The Range header of a download (RFC 9110, section 14): one range of bytes is
// served as 206 with Content-Range; a range wholly past the end is 416; anything
// else (several ranges, another unit, a malformed header) gets the whole file,
// as the RFC allows a server to ignore Range.

/** Inclusive byte offsets. */
export interface ByteRange {
  start: number;
  end: number;
}

/** The range to serve of a file of `size` bytes: null for the whole file, 'unsatisfiable' for 416. */
export function byteRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (header === undefined) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    // The last N bytes.
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (!Number.isSafeInteger(start)) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null; // invalid: ignored
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
