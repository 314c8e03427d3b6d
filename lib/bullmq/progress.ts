/**
 * Writes a job's progress (`job.updateProgress`) one write at a time: a change that comes while a
 * write is under way replaces any change still waiting, so a chatty task costs at most one
 * write in flight and one waiting, and the last state is always the one written.
 *
 * `set` tells when the state it was given, or a later one that replaced it, is in Redis: a run
 * tells its listeners about a question only then, so `answerJobInput` called from an `input`
 * event finds the question on the job (and never an older progress that lacks it).
 */
import { createHash } from 'node:crypto';
import type { Job } from 'bullmq';
import type { ToolJobProgress } from './types.js';

/** `sha256:` and the first 12 hex digits of the id's SHA-256: names a task without giving its id away. */
export function fingerprint(taskId: string): string {
  return `sha256:${createHash('sha256').update(taskId).digest('hex').slice(0, 12)}`;
}

/** See the module comment. */
export class ProgressWriter {
  private waiting: ToolJobProgress | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly job: Pick<Job, 'updateProgress'>,
    private readonly failed: (error: Error) => void,
  ) {}

  /**
   * Writes `progress` soon.
   * @returns resolves once `progress`, or a later state that replaced it, was written (or its
   * write failed, which is reported through the constructor's `failed`); never rejects.
   */
  set(progress: ToolJobProgress): Promise<void> {
    this.waiting = progress;
    this.writing ??= this.flush();
    return this.settled();
  }

  /** Resolves once nothing is waiting to be written. */
  async settled(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  private async flush(): Promise<void> {
    try {
      while (this.waiting !== undefined) {
        const next = this.waiting;
        this.waiting = undefined;
        try {
          await this.job.updateProgress(next);
        } catch (error) {
          this.failed(error instanceof Error ? error : new Error(String(error)));
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
