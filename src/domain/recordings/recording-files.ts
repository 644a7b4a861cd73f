// Where a recording's files are (docs/design.md, "Recording with consent"):
// one directory per recording under RECORDINGS_DIR, named by its id, holding
// Janus's raw files (raw/) and then the composed file. Deleting a recording is
// deleting its directory, so nothing of it can be left behind.
import fs from 'node:fs/promises';
import path from 'node:path';
import { UUID_PATTERN } from '../support/ids.js';

export const RECORDING_CONTENT_TYPE = 'video/webm';

export function recordingFiles(root: string) {
  const dirOf = (id: string) => {
    // Ids are ours (uuids); anything else must never become a path.
    if (!UUID_PATTERN.test(id)) throw new Error(`not a recording id: ${id}`);
    return path.join(root, id.toLowerCase());
  };
  return {
    root,
    dirOf,
    /** Where Janus writes the raw files: `<rawDir>/<peerId>-<kind>` (docs/design.md, "Recording with consent"). */
    rawDirOf: (id: string) => path.join(dirOf(id), 'raw'),
    /** The composed file. */
    fileOf: (id: string) => path.join(dirOf(id), 'recording.webm'),

    async createRawDir(id: string): Promise<string> {
      const raw = path.join(dirOf(id), 'raw');
      await fs.mkdir(raw, { recursive: true });
      return raw;
    },

    /** Whether anything was recorded: any non-empty file in raw/. */
    async hasRaw(id: string): Promise<boolean> {
      const raw = path.join(dirOf(id), 'raw');
      const names = await fs.readdir(raw).catch(() => [] as string[]);
      for (const name of names) {
        const stat = await fs.stat(path.join(raw, name)).catch(() => null);
        if (stat?.isFile() && stat.size > 0) return true;
      }
      return false;
    },

    async removeRaw(id: string): Promise<void> {
      await fs.rm(path.join(dirOf(id), 'raw'), { recursive: true, force: true });
    },

    async remove(id: string): Promise<void> {
      await fs.rm(dirOf(id), { recursive: true, force: true });
    },

    /** The recording directories present, with their last change (for the sweep of orphans). */
    async list(): Promise<{ id: string; changedAt: Date }[]> {
      const entries = await fs.readdir(root, { withFileTypes: true }).catch(() => []);
      const found: { id: string; changedAt: Date }[] = [];
      for (const entry of entries) {
        if (!entry.isDirectory() || !UUID_PATTERN.test(entry.name)) continue;
        const stat = await fs.stat(path.join(root, entry.name)).catch(() => null);
        if (stat) found.push({ id: entry.name, changedAt: stat.mtime });
      }
      return found;
    },
  };
}

export type RecordingFiles = ReturnType<typeof recordingFiles>;
