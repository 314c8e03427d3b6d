/**
 * A task creation given up before its answer: what the call rejects with, and the follow-up that
 * cancels the task it may still create ({@link givenUp}); and the one `tasks/cancel` of a task
 * nobody tracks ({@link cancelOrphan}), such as one whose `CreateTaskResult` was refused
 * ({@link cancelRefused}). The follow-ups go to the client's {@link Abandoned}, which
 * `close()` waits for.
 */
import { stopError, type StopScope } from './deadline-signal.js';
import type { Abandoned } from './abandoned.js';
import type { LaunchCreation } from './launch-parts.js';
import { TaskProtocolError, type TaskError } from '../../errors.js';
import type { Task } from '../../types.js';
import type { StopReason } from '../../util/race.js';
import type { StartReply } from '../../wire/wire.js';

/**
 * The caller gave a task creation up before its answer (`stop`): if a task gets created anyway,
 * it is cancelled once its id is known (also when its late `CreateTaskResult` is refused as
 * malformed but names a usable id), unless the caller opted out of remote cancels for this kind of
 * stop (a close always cancels it). Returns the error the call rejects with. `noTask`: the
 * call was given up between input rounds, with no `tools/call` outstanding (see
 * `Launch.betweenRounds`).
 */
export function givenUp(
  scope: StopScope,
  abandoned: Pick<Abandoned, 'add'>,
  stop: StopReason,
  request: Promise<StartReply>,
  creation: LaunchCreation,
  noTask: boolean,
): TaskError {
  const { call } = scope;
  const kind = stop.kind;
  const cancel = kind === 'closed' || (kind === 'abort' ? call.cancelOnAbort : call.cancelOnTimeout);
  abandoned.add(
    request.then(
      (late) => {
        if (late.kind !== 'task' || !cancel) {
          // No task, or one left running on purpose: a request for it is one for an unknown task.
          creation.end();
          return;
        }
        return cancelOrphan(scope, late.snapshot.task, creation);
      },
      (error: unknown) => {
        // A late CreateTaskResult refused as malformed may still have made a task: cancelled too.
        const taskId = cancel ? refusedTaskId(scope, error) : undefined;
        if (taskId === undefined) return creation.end();
        return cancelOrphan(scope, { taskId }, creation);
      },
    ),
  );
  return stopError(scope, stop, noTask ? 'no-task' : cancel ? 'pending' : 'disabled');
}

/**
 * Sends one `tasks/cancel` for a task nobody tracks; settles when it is answered or failed.
 * With `creation` (the given-up creation that made the task), it also ends that creation. While
 * the cancel is under way, input requests for the task (held ones, and new ones) are refused as
 * for a task that ended locally, never shown to a callback: the caller gave up on this task. A
 * server that cannot cancel leaves the task running: its requests are then ones for an unknown
 * task ([V7], docs/input.md#routing).
 */
export function cancelOrphan(scope: StopScope, task: Pick<Task, 'taskId'>, creation?: LaunchCreation): Promise<void> {
  const { engine, call } = scope;
  if (!engine.features.cancel) {
    creation?.end();
    return Promise.resolve();
  }
  const release = creation?.abandon(task.taskId);
  return engine.wire
    .cancelTask(
      task.taskId,
      engine.requestOptions(call.requestTimeoutMs, undefined, true, call.instrument, false, call.input),
    )
    .then(
      () => undefined,
      (error: unknown) => engine.report(error, undefined),
    )
    .finally(release);
}

/**
 * A `tools/call` reply refused as malformed although it names a usable task id (a
 * `CreateTaskResult` with an unknown status, say, or a task the request did not ask for): the
 * server has most likely created that task, and nobody will track it. It gets one `tasks/cancel`,
 * not awaited (the call rejects with `error` at once); a failure is reported on `error`. An id this
 * client already tracks is left alone: it is another call's task.
 */
export function cancelRefused(scope: StopScope, abandoned: Pick<Abandoned, 'add'>, error: unknown): void {
  const taskId = refusedTaskId(scope, error);
  if (taskId !== undefined) abandoned.add(cancelOrphan(scope, { taskId }));
}

/** The usable task id a refused `tools/call` reply names, unless this client tracks it (see {@link cancelRefused}). */
function refusedTaskId(scope: StopScope, error: unknown): string | undefined {
  if (!(error instanceof TaskProtocolError) || error.method !== 'tools/call') return undefined;
  const taskId = error.taskId;
  return taskId === undefined || scope.engine.get(taskId) !== undefined ? undefined : taskId;
}
