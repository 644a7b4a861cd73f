// The periodic job runner: a job that keeps failing (the database away) is
// reported once, and once more when it works again, not at every run.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startJobs } from './jobs.js';

afterEach(() => vi.useRealTimers());

function recordingLog() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, msg, fields });
  return { lines, log: { warn: at('warn'), info: at('info'), debug: at('debug') } as never };
}

describe('startJobs', () => {
  it('warns once while a job keeps failing, says when it works again, and counts every run', async () => {
    vi.useFakeTimers();
    const { lines, log } = recordingLog();
    let failing = true;
    const outcomes: string[] = [];
    const run = async () => {
      if (failing) throw new Error('connect ECONNREFUSED');
    };
    const jobs = startJobs([{ name: 'presence', intervalSeconds: 1, run }], log, (_job, outcome) => void outcomes.push(outcome));
    await vi.advanceTimersByTimeAsync(5000);
    failing = false;
    await vi.advanceTimersByTimeAsync(2000);
    failing = true;
    await vi.advanceTimersByTimeAsync(1000);
    await jobs.stop();
    expect(outcomes).toEqual(['failed', 'failed', 'failed', 'failed', 'failed', 'ok', 'ok', 'failed']);
    expect(lines.filter((l) => l.level !== 'debug').map((l) => [l.level, l.msg, l.fields.failedRuns])).toEqual([
      ['warn', 'job failed (said once until it works again)', undefined],
      ['info', 'job works again', 5],
      ['warn', 'job failed (said once until it works again)', undefined],
    ]);
  });
});
