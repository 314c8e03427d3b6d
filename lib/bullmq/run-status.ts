/**
 * What a run shows of its task in the job's progress: the latest status (from the task's status
 * events), the tool's progress, and the questions waiting for an answer, written through a
 * {@link ProgressWriter} and told as `status` and `input` events.
 */
import type { Job } from 'bullmq';
import { taskFingerprint, type TaskHandle, type TaskProgress } from '../index.js';
import { ProgressWriter } from './progress.js';
import type { PendingQuestion, ToolJobEvent, ToolJobProgress } from './types.js';

/** The progress of one run's job. */
export class RunStatus {
  private status: ToolJobProgress | undefined = undefined;
  /** Writes the job's progress (await its `settled()` at the run's end). */
  readonly progress: ProgressWriter;

  /**
   * @param questions - the questions waiting for an answer now.
   */
  constructor(
    job: Job,
    private readonly jobId: string,
    private readonly emit: (event: ToolJobEvent) => void,
    private readonly questions: () => PendingQuestion[],
  ) {
    this.progress = new ProgressWriter(job, (error) => emit({ type: 'warning', jobId, error }));
  }

  /** Follows the task's statuses into the job's progress. */
  follow(handle: TaskHandle): void {
    const taskId = handle.taskId as string;
    handle.on('status', (_metrics, task) => {
      this.status = { ...this.current(taskId), status: task.status, statusMessage: task.statusMessage };
      this.progress.set({ ...this.status, questions: this.questions() });
      this.emit({
        type: 'status',
        jobId: this.jobId,
        taskId,
        status: task.status,
        statusMessage: task.statusMessage,
      });
    });
  }

  /**
   * The progress so far, for task `taskId` (`undefined` while the call has no task yet). A task
   * known at last takes the place of `''`, with what was reported so far; another task (the run
   * called the tool again, or resumed another run's task) starts afresh: the old one's status and
   * progress are not the new one's.
   */
  private current(taskId: string | undefined): ToolJobProgress {
    const task = taskId === undefined ? undefined : taskFingerprint(taskId);
    const status = this.status;
    if (status === undefined || (task !== undefined && status.task !== '' && status.task !== task))
      return { status: 'working', task: task ?? '', questions: [] };
    return task === undefined || status.task === task ? status : { ...status, task };
  }

  /** The tool reported `progress` (for task `taskId`, when it has one yet). */
  progressed(progress: TaskProgress, taskId: string | undefined): void {
    this.status = {
      ...this.current(taskId),
      progress: { progress: progress.progress, total: progress.total, message: progress.message },
    };
    this.progress.set({ ...this.status, questions: this.questions() });
  }

  /** The waiting questions changed (`asked`: the one just asked, if any) for task `taskId`. */
  questionsChanged(asked: PendingQuestion | undefined, taskId: string | undefined): void {
    const questions = this.questions();
    const base = this.current(taskId);
    this.status = { ...base, status: questions.length > 0 ? 'input_required' : base.status };
    const number = this.progress.set({ ...this.status, questions });
    if (asked === undefined) return;
    // Told once the job shows the question: `answerJobInput` from the listener finds it there.
    void this.progress.written(number).then(() => {
      if (this.questions().includes(asked)) this.emit({ type: 'input', jobId: this.jobId, taskId, question: asked });
    });
  }
}
