/**
 * A call's deadline (`timeoutMs`) and abort signal: the errors they stop a call with
 * (`TaskTimeoutError`, `TaskAbortError`, and `TaskClosedError` for a `close()` during the call,
 * each saying what became of the remote task), and arming them on a tracked task, where passing
 * the deadline (in the engine: engine/deadline.ts) or aborting gives the task up and cancels it
 * remotely per `cancelOnTimeout` / `cancelOnAbort` (engine/give-up.ts).
 */
import type { Deadline, TaskEngine } from '../../engine/engine.js';
import type { TaskView } from '../../engine/task-view.js';
import { onAbort } from '../../util/abort.js';
import {
  TaskAbortError,
  TaskClosedError,
  TaskTimeoutError,
  describeRemoteCancel,
  type RemoteCancelOutcome,
  type TaskError,
} from '../../errors.js';
import type { ResolvedCallOptions } from '../options.js';
import type { StopReason } from '../../util/race.js';

/** The parts of a call a stop needs. */
export interface StopScope {
  readonly engine: TaskEngine;
  readonly call: ResolvedCallOptions;
  readonly toolName: string;
  /** Clock time the call (or the resume) began. */
  readonly startedAt: number;
}

/** The error for a call stopped by its deadline or signal. */
export function stopError(
  scope: StopScope,
  stop: StopReason,
  remoteCancel: RemoteCancelOutcome,
  record?: TaskView,
): TaskError {
  const { engine, call, toolName, startedAt } = scope;
  const common = { task: record?.task, toolName, remoteCancel };
  const fate = describeRemoteCancel(remoteCancel);
  if (stop.kind === 'abort') {
    return new TaskAbortError(`Call to "${toolName}" was aborted; ${fate}`, { ...common, reason: stop.reason });
  }
  if (stop.kind === 'closed') {
    return new TaskClosedError(`The TaskClient was closed during the call to "${toolName}"; ${fate}`, common);
  }
  const elapsedMs = engine.config.clock.now() - startedAt;
  const timeoutMs = call.timeoutMs ?? elapsedMs;
  const lost = engine.paused ? ' while the connection to the server was lost' : '';
  return new TaskTimeoutError(`Task for tool "${toolName}" timed out after ${timeoutMs} ms${lost}; ${fate}`, {
    ...common,
    timeoutMs,
    elapsedMs,
    connectionLost: engine.paused,
  });
}

/**
 * A call's deadline as the engine arms it: passing it cancels the remote task per
 * `cancelOnTimeout`, and the task settles with a `TaskTimeoutError`.
 */
class CallDeadline implements Deadline {
  constructor(
    private readonly scope: StopScope,
    readonly task: TaskView,
  ) {}

  get cancelRemote(): boolean {
    return this.scope.call.cancelOnTimeout;
  }

  error(remote: RemoteCancelOutcome): TaskError {
    return stopError(this.scope, { kind: 'timeout' }, remote, this.task);
  }
}

/** Arms the deadline (in the engine) and the abort listener of a tracked task. */
export function armDeadlineAndSignal(scope: StopScope, record: TaskView): void {
  const { engine, call } = scope;
  if (record.settlement !== undefined) return;
  const timeoutMs = call.timeoutMs;
  if (timeoutMs !== undefined) engine.armDeadline(new CallDeadline(scope, record), scope.startedAt + timeoutMs);
  const signal = call.signal;
  if (signal === undefined) return;
  const graceMs = engine.config.cancelGraceMs;
  // One listener per signal however many calls share it (util/abort.ts); an already aborted one
  // (e.g. a resume() with an aborted signal) stops at once.
  const off = onAbort(signal, () => {
    void engine.giveUp(record, {
      cancelRemote: call.cancelOnAbort,
      graceMs,
      error: (remote) => stopError(scope, { kind: 'abort', reason: signal.reason }, remote, record),
    });
  });
  record.onSettled(off);
}
