/**
 * What a job's run needs from its processor ({@link RunContext}: the resolved options and shared
 * parts), and how a run ends when it does not return the tool's result ({@link RunEnded}).
 */
import type { InputCallbacks } from '../index.js';
import type { WatchedJob } from './control.js';
import type { JobInstance } from './control-store.js';
import type { JobWrite, JobWriteGuard } from './job-write.js';
import type { Lease } from './pool.js';
import type { ToolJobData, ToolJobEvent } from './types.js';

/** What a run needs from its processor (resolved options and shared parts). */
export interface RunContext {
  readonly callbacks: InputCallbacks;
  readonly uncertainCall: 'call-again' | 'fail';
  /** How long after another worker's calling mark a run waits for that worker's reference. */
  readonly callingGraceMs: number;
  readonly lostTask: 'fail' | 'call-again';
  readonly retryFailedTasks: boolean;
  readonly retry: { readonly attempts: number; readonly minDelayMs: number; readonly maxDelayMs: number };
  /**
   * The `reconnectGraceMs` option: how long a lost connection may stay lost, and how long a job
   * that fails for good waits for the connection that cancels its task.
   */
  readonly reconnectGraceMs: number;
  /** Aborted when the processor closes: runs hand their jobs back to the queue. */
  readonly closing: AbortSignal;
  /** Calls `listener` when the processor closes; returns the undo. */
  onClose(listener: () => void): () => void;
  /** The job's data as stored now (another worker may have written it). */
  reload(jobId: string): Promise<unknown>;
  /** Writes the job's `calling` mark, its task's reference, or forgets its task, unless another run got there first (see {@link writeJobData}). */
  write(jobId: string, data: ToolJobData, guard: JobWriteGuard): Promise<JobWrite>;
  /**
   * Whether the lock of job `jobId` is `token` (the run still holds the job, no other worker took
   * it); false when that cannot be read within `reconnectGraceMs`.
   */
  holds(jobId: string, token: string): Promise<boolean>;
  acquire(server: string, sessionId: string | undefined): Promise<Lease>;
  /** Starts watching the control channel for `job`, run with the lock `token`. */
  watch(job: JobInstance, token: string | undefined): WatchedJob;
  emit(event: ToolJobEvent): void;
}

/** How a run ended when it does not return the tool's result. */
export type RunEnd =
  /** The processor closed: hand the job back to the queue (its task, if any, runs on). */
  | { readonly kind: 'release'; readonly taskId: string | undefined }
  /** End the job without a retry (BullMQ `UnrecoverableError`). */
  | { readonly kind: 'final'; readonly message: string; readonly cause: unknown }
  /** End this BullMQ attempt; the job's `attempts` decide whether it runs again. */
  | { readonly kind: 'attempt'; readonly message: string; readonly cause: unknown };

/** Thrown by {@link JobRun.run} when the job does not complete. */
export class RunEnded extends Error {
  constructor(readonly end: RunEnd) {
    super(end.kind === 'release' ? 'released' : end.message, end.kind === 'release' ? undefined : { cause: end.cause });
  }
}
