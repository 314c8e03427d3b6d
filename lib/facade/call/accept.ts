/**
 * The end of a call's launch (launch.ts): the server's answer made into a handle. A task, even one
 * not asked for, is tracked, and its deadline and abort armed; one created after `close()` began
 * is cancelled instead, and a task id already in use is refused.
 */
import { armDeadlineAndSignal, stopError, type StopScope } from './deadline-signal.js';
import { cancelOrphan } from './give-up.js';
import type { LaunchCreation, LaunchParts } from './launch-parts.js';
import { TaskNotSupportedError, TaskProtocolError } from '../../errors.js';
import type { TaskHandle } from '../../api/index.js';
import type { TaskView } from '../../engine/task-view.js';
import { TaskHandleOf } from '../handle/handle.js';
import type { StartReply } from '../../wire/wire.js';

/** The call whose answer this is (a `Launch`). */
export interface AcceptingCall extends StopScope {
  readonly parts: LaunchParts;
  /** Aborted when the client closes. */
  readonly closed: AbortSignal;
  /** Clock time the `tools/call` that created the task was sent. */
  readonly sentAt: number;
  /** The call's task is tracked. */
  tracked(record: TaskView): void;
}

/**
 * Turns the server's answer into a handle; a task (even one not asked for) is tracked.
 * `creation` is the task creation under way, if this call is one.
 */
export function acceptReply(launch: AcceptingCall, reply: StartReply, creation?: LaunchCreation): TaskHandle {
  const { engine, call, toolName, parts } = launch;
  if (reply.kind === 'input') throw new TypeError('unreachable: input is answered before accept()');
  if (reply.kind === 'immediate') {
    if (call.requireTask && !engine.features.toolNegotiation) {
      // The server decides on this wire, and it answered at once: the result is not lost.
      throw new TaskNotSupportedError(`The server answered "${toolName}" at once instead of running it as a task`, {
        feature: 'tool',
        toolName,
        result: reply.result,
      });
    }
    return made(
      launch,
      TaskHandleOf.create(toolName, { kind: 'immediate', result: reply.result, wire: engine.wire.kind }),
    );
  }
  const task = reply.snapshot.task;
  if (launch.closed.aborted) {
    // Created after close() began: never tracked, cancelled once.
    parts.abandoned.add(cancelOrphan(launch, task, creation));
    throw stopError(launch, { kind: 'closed' }, engine.features.cancel ? 'unknown' : 'not-supported');
  }
  if (engine.get(task.taskId) !== undefined) {
    // [V4]: task ids are unique; a reused one must not merge two calls into one task.
    throw new TaskProtocolError('Malformed tools/call reply from server: the task id is already in use', {
      method: 'tools/call',
      task,
      toolName,
    });
  }
  const record = engine.track(reply.snapshot, toolName, {
    startedAt: launch.startedAt,
    sentAt: launch.sentAt,
    requestTimeoutMs: call.requestTimeoutMs,
    instrument: call.instrument,
    input: call.input,
  });
  launch.tracked(record);
  const handle = made(launch, parts.live.adopt(record, call.callbacks, call.progressToken, reply.immediateResponse));
  armDeadlineAndSignal(launch, record);
  return handle;
}

/** Tells the call's instrumentation its handle, before any later event of it. */
function made(launch: AcceptingCall, handle: TaskHandle): TaskHandle {
  launch.call.instrument?.handle?.(handle);
  return handle;
}
