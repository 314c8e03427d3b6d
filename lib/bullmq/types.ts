/**
 * Public types of the BullMQ integration: what a tool job holds (its data, its progress, its
 * pending questions) and what a worker reports about it.
 */
import type { CreateMessageRequestParams, ElicitRequestParams, TaskReference, TaskStatus } from '../index.js';

/** What a producer asks a worker to do: call `tool` with `args` on the server named `server`. */
export interface ToolJobRequest {
  /**
   * The key of the MCP server, as the workers' `connect` callback knows it (e.g. `'analytics'`).
   * Never a URL with credentials or a token: job data is readable by anyone who can read the queue.
   */
  readonly server: string;
  /** The tool to call. */
  readonly tool: string;
  /** The tool's arguments (JSON). @defaultValue `{}` */
  readonly args?: Record<string, unknown> | undefined;
  /**
   * Deadline of the whole job, from the moment it is enqueued: time spent waiting in the queue,
   * the call, the task and any takeover by another worker all count. When it passes, the remote
   * task is cancelled and the job fails without a retry.
   * @defaultValue undefined (no deadline)
   */
  readonly timeoutMs?: number | undefined;
  /** The `ttl` to ask the server to keep the task for, in ms. @defaultValue the server's default */
  readonly ttlMs?: number | undefined;
}

/**
 * The data of a tool job, as stored in the job (`job.data`). Workers add `calling` and `task`
 * as the job goes on; both survive a worker's death, which is what lets another worker resume
 * the task instead of calling the tool again.
 */
export interface ToolJobData {
  /** Format marker and version of this data. */
  readonly mcpTask: 1;
  /** The server's key (see {@link ToolJobRequest.server}). */
  readonly server: string;
  /** The tool to call. */
  readonly tool: string;
  /** The tool's arguments. */
  readonly args: Record<string, unknown>;
  /** Wall-clock time (ms since the epoch) at which the job gives up; absent without a deadline. */
  readonly deadlineAt?: number | undefined;
  /** The `ttl` to ask for, in ms. */
  readonly ttlMs?: number | undefined;
  /**
   * Set just before a worker sends `tools/call`, cleared when the task's reference is stored.
   * A worker that finds it set without `task` knows that the tool may have been called already
   * (the previous worker died between the call and storing its reference).
   */
  readonly calling?:
    | {
        /** When the call was about to be sent (ms since the epoch). */
        readonly at: number;
        /**
         * A random id of the run that wrote it: tells a run its own mark from another worker's
         * written in the same millisecond. Absent in marks written by earlier versions.
         */
        readonly by?: string | undefined;
      }
    | undefined;
  /** The task the tool call created, once its reference is stored. */
  readonly task?:
    | {
        /** What `TaskClient.resume` needs; the task id inside is a secret. */
        readonly reference: TaskReference;
        /** When the reference was stored (ms since the epoch). */
        readonly storedAt: number;
      }
    | undefined;
}

/** A question a task asks its user, waiting on a job for an answer (see `answerJobInput`). */
export interface PendingQuestion {
  /** Stable id of the question within its job; pass it to `answerJobInput` when several are pending. */
  readonly id: string;
  /** An elicitation (a form or a URL for the user), or a sampling request (a completion from a model). */
  readonly kind: 'elicitation' | 'sampling';
  /** The server's request, as sent, less the related-task `_meta` that holds the task id (a secret). */
  readonly params: ElicitRequestParams | CreateMessageRequestParams;
  /** When a worker received it (ms since the epoch). */
  readonly askedAt: number;
}

/**
 * The progress of a tool job (`job.progress`), written by the worker that holds it whenever the
 * task's status or its questions change.
 */
export interface ToolJobProgress {
  /** The task's latest status. */
  readonly status: TaskStatus;
  /** The server's status message, if any. */
  readonly statusMessage?: string | undefined;
  /** The task's fingerprint (`sha256:` and 12 hex digits of its id's hash): the id itself is a secret. */
  readonly task: string;
  /** The latest `notifications/progress` of the call, when the server sends them. */
  readonly progress?:
    | {
        /** Progress so far. */
        readonly progress: number;
        /** Total, when known. */
        readonly total?: number | undefined;
        /** A message, if any. */
        readonly message?: string | undefined;
      }
    | undefined;
  /** Questions waiting for an answer: the task is then `input_required`. */
  readonly questions: readonly PendingQuestion[];
}

/** What a worker reports about the jobs it runs (the `onEvent` option of `taskProcessor`). */
export type ToolJobEvent =
  | {
      /** The tool was called: a task was created and its reference stored (or a plain result came). */
      readonly type: 'started';
      /** The job. */
      readonly jobId: string;
      /** The task id; `undefined` when the server answered with a plain result. */
      readonly taskId: string | undefined;
      /** The tool. */
      readonly tool: string;
      /**
       * Milliseconds from the moment the `CreateTaskResult` was in hand to the moment its reference
       * was stored in Redis: a worker that dies in between leaves a job that calls the tool again.
       */
      readonly storeMs: number | undefined;
      /**
       * Milliseconds from the task's `createdAt` (the server's clock) to the stored reference: the
       * whole window in which the task existed unrecorded, when both clocks agree.
       */
      readonly windowMs: number | undefined;
    }
  | {
      /** A worker took over a job whose task another attempt started, and waits on it again. */
      readonly type: 'resumed';
      /** The job. */
      readonly jobId: string;
      /** The task id. */
      readonly taskId: string;
      /** The tool. */
      readonly tool: string;
      /** Milliseconds from the stored reference's time to this resume (how long the task went unwatched, at most). */
      readonly sinceStoredMs: number;
    }
  | {
      /** The task's status changed. */
      readonly type: 'status';
      /** The job. */
      readonly jobId: string;
      /** The task id. */
      readonly taskId: string;
      /** The new status. */
      readonly status: TaskStatus;
      /** Its message, if any. */
      readonly statusMessage: string | undefined;
    }
  | {
      /**
       * The task asked a question; it waits on the job until `answerJobInput` answers it. Told once
       * the job's progress shows the question (so `answerJobInput` can be called from the listener;
       * after a failed progress write, a `warning`, once a later write succeeds), and not at all for
       * a question answered or withdrawn before then.
       */
      readonly type: 'input';
      /** The job. */
      readonly jobId: string;
      /** The task id. */
      readonly taskId: string | undefined;
      /** The question. */
      readonly question: PendingQuestion;
    }
  | {
      /** A transient failure (a lost connection, a server that cannot be reached): retried without using a BullMQ attempt. */
      readonly type: 'retry';
      /** The job. */
      readonly jobId: string;
      /** What failed. */
      readonly error: Error;
      /** Which retry this is (1 for the first). */
      readonly attempt: number;
      /** Milliseconds until it is made. */
      readonly delayMs: number;
    }
  | {
      /** The worker is closing: the job went back to the queue with its task running, for another worker to resume. */
      readonly type: 'released';
      /** The job. */
      readonly jobId: string;
      /** The task id, when a task was running. */
      readonly taskId: string | undefined;
    }
  | {
      /** Something went wrong that did not decide the job (a progress update that could not be written). */
      readonly type: 'warning';
      /** The job. */
      readonly jobId: string;
      /** What went wrong. */
      readonly error: Error;
    };
