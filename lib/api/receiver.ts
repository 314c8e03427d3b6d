/**
 * Public types of the receiver role: the receiver `taskReceiver()` makes (`mcp-task-client/receiver`),
 * its options, and the handle a TaskClient serving it gives.
 */
import type { Task } from '../types.js';
import type { ElicitationCallback, SamplingCallback } from './input.js';

/**
 * Options of `taskReceiver()` (`mcp-task-client/receiver`): how a client runs the server's
 * task-augmented `elicitation/create` and `sampling/createMessage` requests as receiver tasks
 * (MCP 2025-11-25). Every duration is in milliseconds.
 */
export interface ServeOptions {
  /**
   * Answers elicitations, task-augmented or not (a plain one reaches it when no call or client
   * callback answers first). Only the kinds given a callback are served.
   * @defaultValue the client's `onElicitation` when neither callback is given
   */
  readonly elicitation?: ElicitationCallback | undefined;
  /**
   * Answers sampling requests, task-augmented or not.
   * @defaultValue the client's `onSampling` when neither callback is given
   */
  readonly sampling?: SamplingCallback | undefined;
  /**
   * Retention granted when the server asks for no `ttl`, as given (an integer of at least 1,
   * capped by `maxTtlMs`).
   * @defaultValue 3600000 (1 hour)
   */
  readonly ttlMs?: number | undefined;
  /**
   * Longest retention granted: a larger requested `ttl` is lowered to it, and the granted value is
   * what the task reports. A smaller requested `ttl` (`0` included) is raised to at least 1 second
   * and two `pollIntervalMs`, unless `maxTtlMs` is lower. A task and its result are deleted `ttl`
   * after creation, running or not.
   * @defaultValue 86400000 (24 hours)
   */
  readonly maxTtlMs?: number | undefined;
  /**
   * The `pollInterval` suggested to the server in every task snapshot.
   * @defaultValue 1000
   */
  readonly pollIntervalMs?: number | undefined;
  /**
   * Most receiver tasks held per connection, running or finished. When a new task would exceed
   * it, the oldest cancelled task is deleted, else the oldest finished one whose result
   * `tasks/result` already delivered; when there is none (every task still running or holding a
   * result the server has not fetched), the request is refused with a JSON-RPC error (-32603).
   * @defaultValue 1000
   */
  readonly maxTasks?: number | undefined;
  /**
   * Most `tasks/result` requests that may wait on one running task at a time. Each waiting request
   * holds memory until the task ends or its ttl elapses, so a server cannot pile them up: past the
   * cap, a further one is refused at once with a JSON-RPC error (-32603), as a new task is past
   * `maxTasks`. A request the server cancels, or that gets its answer, frees its place.
   * @defaultValue 16
   */
  readonly maxResultWaiters?: number | undefined;
  /**
   * Tasks per `tasks/list` page.
   * @defaultValue 50
   */
  readonly pageSize?: number | undefined;
}

/**
 * A receiver made by `taskReceiver(options)` of `mcp-task-client/receiver`, for a TaskClient to
 * serve: give it to the `serve` option ({@link TaskClientOptions.serve}) or to
 * {@link TaskClient.serve}. The receiver's code lives in that entry point, so a host that serves no
 * receiver tasks bundles none of it.
 */
export interface TaskReceiver {
  /** The options it was made with. */
  readonly options: Readonly<ServeOptions>;
}

/**
 * Serving of receiver tasks, from {@link TaskClient.serve} or the `serve` option: numbers for a host's UI, and the way
 * to stop. Stopping (or closing the TaskClient) cancels every running receiver task, aborts the
 * signals of their callbacks and deletes every task; the server then gets errors for them.
 */
export interface ReceiverHandle extends AsyncDisposable {
  /** True once serving stopped. */
  readonly closed: boolean;
  /** Receiver tasks held on the current connection, running or finished. */
  readonly size: number;
  /** Receiver tasks whose callback is still running. */
  readonly running: number;
  /** Snapshots of the receiver tasks held on the current connection, oldest first. */
  tasks(): Task[];
  /** Stops serving (idempotent). */
  close(): Promise<void>;
  /** `await using receiver = tasks.serve(...)` support; see {@link ReceiverHandle.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}
