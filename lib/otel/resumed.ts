/**
 * The tasks resumed by `TaskClient.resume` whose traces are open, followed through the client's
 * events (status, expiring, completed, settled) by task id. A resumed handle is read only once its
 * caller observes it, and listening to the handle would observe it: the client's events leave
 * that to the caller. They are listened to only while a resumed task is followed, so that the
 * calls of a client that resumes nothing pay for no listener.
 */
import type { CallToolResult, InstrumentedClient, Task, TaskMetrics, TaskOutcomeKind } from '../index.js';

/** What a task's end brings: a `settled` event's metrics and outcome. */
export type Settlement = TaskMetrics & { readonly outcome: TaskOutcomeKind };

/** What follows one resumed task's life (its trace, call.ts). */
export interface ResumedTrace {
  /** A status snapshot. */
  status(task: Task): void;
  /** Close to the end of its ttl. */
  expiring(remainingMs: number): void;
  /** Its result (with `recordResults`). */
  recordResult(result: CallToolResult): void;
  /** Its end. */
  settled(done: Settlement): void;
}

/** The resumed tasks of one TaskClient. */
export class ResumedTasks {
  private readonly traces = new Map<string, ResumedTrace>();
  private removers: Array<() => void> = [];

  constructor(
    private readonly client: InstrumentedClient,
    private readonly recordResults: boolean,
  ) {}

  /** Follows task `taskId` for `trace` until it settles. */
  follow(taskId: string, trace: ResumedTrace): void {
    this.traces.set(taskId, trace);
    if (this.removers.length === 0) this.listen();
  }

  /** Stops following `taskId` (its trace ended); the client's events are let go with the last one. */
  forget(taskId: string, trace: ResumedTrace): void {
    if (this.traces.get(taskId) === trace) this.traces.delete(taskId);
    if (this.traces.size > 0) return;
    for (const remove of this.removers.splice(0)) remove();
  }

  /** The trace of the task `metrics` names (a requestor task only: a receiver task is another id space). */
  private of(metrics: TaskMetrics): ResumedTrace | undefined {
    return metrics.role === 'requestor' ? this.traces.get(metrics.taskId) : undefined;
  }

  private listen(): void {
    const { client } = this;
    this.removers = [
      client.on('status', (metrics, task) => this.of(metrics)?.status(task)),
      client.on('expiring', (metrics, expiry) => this.of(metrics)?.expiring(expiry.remainingMs)),
      client.on('settled', (done) => this.of(done)?.settled(done)),
    ];
    if (this.recordResults) {
      this.removers.push(
        client.on('completed', (done) => {
          if (done.role === 'requestor') this.of(done)?.recordResult(done.result);
        }),
      );
    }
  }
}
