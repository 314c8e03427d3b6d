/**
 * The engine's settings, the events it reports, and the options of its operations.
 */
import type { TaskError } from '../errors.js';
import type { Clock, Task } from '../types.js';
import type {
  ErrorClass,
  InlineInput,
  InputAnswers,
  TaskWire,
  WireFeatures,
  WireRequestOptions,
  WireSnapshot,
} from '../wire/wire.js';
import type { Scheduler } from '../util/scheduler.js';
import type { TaskRecord } from './record.js';
import type { Settlement } from './record-extras.js';
import type { TaskView } from './task-view.js';
import type { CallInstrument, RetryPolicy } from '../api/index.js';
import type { PollTiming } from './timing.js';

/** Engine settings (already validated and defaulted by the client). */
export interface EngineConfig extends PollTiming {
  readonly clock: Clock;
  readonly random: () => number;
  readonly requestTimeoutMs: number;
  readonly retry: RetryPolicy;
  /**
   * Consecutive non-transient poll failures (or malformed replies) before the task is failed; also
   * the most `tasks/update` sends of one input answer before the task is failed ([E23]).
   */
  readonly maxPollFailures: number;
  /** Notifications kept for tasks whose `CreateTaskResult` has not arrived yet. */
  readonly maxEarlyNotifications: number;
  /** Warn this long before a working task's ttl runs out; `undefined` picks 10% of the ttl (1 s..60 s). */
  readonly ttlWarningMs: number | undefined;
  /** Longest wait of a stop (deadline, abort, dispose) for the remote cancel or a terminal payload. */
  readonly cancelGraceMs: number;
}

/**
 * What stops a request: a signal (requests that belong to no task), or a task's record (a task's
 * requests stop together when its tracking stops). Pass it on to `requestOptions`.
 */
export type RequestScope = AbortSignal | TaskRecord;

/** Where a snapshot came from. */
export type SnapshotSource = 'poll' | 'notification' | 'cancel' | 'result';

/** What the engine reports to its owner, about a task's read-only {@link TaskView}. */
export interface EngineEvents {
  /** A task accepted a changed snapshot; `previous` is the one it replaced. */
  status(task: TaskView, source: SnapshotSource, previous: Task): void;
  /** A task settled (it is no longer tracked). */
  settled(task: TaskView): void;
  /**
   * A local stop (a deadline, an abort, `dispose()`, `close()`) or a cancel of `task` began
   * ({@link TaskView.ending}); `over` settles (fulfilled or rejected) once it is over. Its last look
   * and `tasks/cancel` are still to come, but what it asks meanwhile is no longer wanted (an answer
   * sent now would be acted on, D10).
   */
  stopping(task: TaskView, over: Promise<unknown>): void;
  /** Something went wrong that did not (yet) fail a task. */
  problem(error: TaskError, task: TaskView | undefined): void;
  /** A task still running is close to its ttl: the server may drop it from about `expiresAt` on ([V11]). */
  expiring(task: TaskView, expiresAt: number): void;
  /** No task creation is under way any more. */
  creationsSettled(): void;
  /** A request on `wire` found the server's session gone: the connection is lost. */
  sessionLost(wire: TaskWire): void;
  /** New input requests rode on a snapshot of `task` ([E3]); answer with the engine's `deliverInput`. */
  input(task: TaskView, items: readonly InlineInput[]): void;
  /**
   * A current snapshot of `task` no longer lists the input requests `keys` ([E5]: withdrawn); answer
   * nothing to them, and tell the engine's `inputDismissed` of each prompt dismissed unanswered.
   */
  withdrawn(task: TaskView, keys: readonly string[]): void;
}

/** Options of {@link TaskEngine.track}. */
export interface TrackOptions {
  /** When the call began (for elapsed times). @defaultValue now */
  readonly startedAt?: number | undefined;
  /**
   * When the request that created the task was sent: the earliest the server can have created
   * it, from which its ttl may count (`ttl-watch.ts`). @defaultValue now (a resumed task)
   */
  readonly sentAt?: number | undefined;
  /** Timeout of each short request for this task. @defaultValue the engine's `requestTimeoutMs` */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * The snapshot is a placeholder (a resumed task not yet read): nothing is requested until
   * {@link TaskEngine.activate}, and observers wait for the first real snapshot.
   */
  readonly provisional?: boolean | undefined;
  /** Watches the task's requests (instrumentation). @defaultValue none */
  readonly instrument?: CallInstrument | undefined;
  /**
   * The input that callbacks answer for the task's call, when it has callbacks of its own: what the
   * task's requests declare ([E35]). @defaultValue what the client answers for any call
   */
  readonly input?: InputAnswers | undefined;
}

/** Why the engine stopped tracking a record before it settled on its own. */
export interface StopIntent {
  /** Keep the snapshot stream open until the stop settles (so it can end with the stop's error). */
  readonly holdStream: boolean;
  /** The stop means to cancel the remote task (a stop that takes it over sends that cancel). */
  readonly cancels: boolean;
}

/**
 * What the engine's helpers (payload fetching in `payload.ts`, cancelling in `cancel.ts`, giving up in `give-up.ts`) use of it.
 * They see this interface, not the engine class, so that no module imports the engine back.
 */
export interface EngineCore {
  readonly config: EngineConfig;
  readonly scheduler: Scheduler;
  readonly wire: TaskWire;
  readonly features: WireFeatures;
  /** Bumped when the wire is replaced. */
  readonly generation: number;
  /** True while the connection is lost. */
  readonly paused: boolean;
  classify(error: unknown): ErrorClass;
  report(error: unknown, record: TaskRecord | undefined): void;
  settle(record: TaskRecord, settlement: Settlement, streamError?: TaskError): void;
  observe(record: TaskRecord, snapshot: WireSnapshot, source: SnapshotSource): void;
  react(record: TaskRecord): void;
  /** Starts observing a resumed task nobody observed yet (see `watch.ts`); nothing for any other. */
  activate(record: TaskRecord): void;
  ensurePoll(record: TaskRecord): void;
  pollDelay(record: TaskRecord): number;
  readTask(record: TaskRecord, scope: RequestScope): Promise<WireSnapshot>;
  requestOptions(
    timeoutMs: number,
    scope?: RequestScope,
    weak?: boolean,
    instrument?: CallInstrument,
    quietTimeout?: boolean,
    input?: InputAnswers,
  ): WireRequestOptions;
  /** One request for `record` in its request group (stopped when its tracking stops). */
  attempt<T>(record: TaskRecord, run: (scope: RequestScope) => Promise<T>): Promise<T>;
  retrying<T>(record: TaskRecord | undefined, run: (scope: RequestScope) => Promise<T>): Promise<T>;
  background<T>(record: TaskRecord, run: (scope: RequestScope) => Promise<T>, once?: boolean): Promise<T>;
  beginStop(record: TaskRecord, intent: StopIntent): void;
  isStopping(record: TaskRecord): boolean;
}
