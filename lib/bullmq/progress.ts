/**
 * Writes a job's progress (`job.updateProgress`) one write at a time: a change that comes while a
 * write is under way replaces any change still waiting, so a chatty task costs at most one
 * write in flight and one waiting, and the last state is always the one written.
 *
 * `written` tells when a state, or a later one that replaced it, is in Redis: a run tells its
 * listeners about a question only then, so `answerJobInput` called from an `input` event finds
 * the question on the job (and never an older progress that lacks it). It does not wait for the
 * writer to fall idle: a task that reports progress without a pause does not hold the event back.
 */
import type { Job } from 'bullmq';
import type { ToolJobProgress } from './types.js';

/** See the module comment. */
export class ProgressWriter {
  private waiting: ToolJobProgress | undefined = undefined;
  /** The number of the state waiting (states are numbered as they are set, from 1). */
  private waitingNumber = 0;
  private count = 0;
  private writing: Promise<void> | undefined = undefined;
  /** Callers of {@link ProgressWriter.written}, each with the number of the state it waits for. */
  private readonly watchers: { readonly number: number; readonly resolve: () => void }[] = [];

  constructor(
    private readonly job: Pick<Job, 'updateProgress'>,
    private readonly failed: (error: Error) => void,
  ) {}

  /**
   * Writes `progress` soon.
   * @returns its number, for {@link ProgressWriter.written}.
   */
  set(progress: ToolJobProgress): number {
    this.count += 1;
    this.waiting = progress;
    this.waitingNumber = this.count;
    this.writing ??= this.flush();
    return this.count;
  }

  /**
   * Resolves once the state numbered `number`, or a later one that replaced it, was written. A
   * write that fails (reported through the constructor's `failed`) resolves nothing: the next
   * write that succeeds does. Never rejects; pending for good if no later write succeeds.
   */
  written(number: number): Promise<void> {
    return new Promise((resolve) => this.watchers.push({ number, resolve }));
  }

  /** Resolves once nothing is waiting to be written. */
  async settled(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  private async flush(): Promise<void> {
    try {
      while (this.waiting !== undefined) {
        const next = this.waiting;
        const number = this.waitingNumber;
        this.waiting = undefined;
        try {
          await this.job.updateProgress(next);
        } catch (error) {
          this.failed(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
        this.wrote(number);
      }
    } finally {
      this.writing = undefined;
    }
  }

  /** States up to `number` are in Redis (each state carries what the earlier ones did). */
  private wrote(number: number): void {
    for (let i = this.watchers.length - 1; i >= 0; i -= 1) {
      const watcher = this.watchers[i]!;
      if (watcher.number > number) continue;
      this.watchers.splice(i, 1);
      watcher.resolve();
    }
  }
}
