/**
 * `TaskClient.resume`: a tracked handle for a task that already exists, from its id or a resume
 * reference (checked by reference.ts), with the resume's own deadline and signal armed, and
 * watched by the instrumentation hook when it watches resumed tasks.
 */
import type { ClientInstrument, ResumeOptions, TaskHandle, TaskReference } from '../../api/index.js';
import type { TaskEngine } from '../../engine/engine.js';
import { TaskOptionError } from '../../errors.js';
import type { SessionPort } from '../../port/port.js';
import { instrumentResume } from '../events/instrumentation.js';
import { checkInputCapabilities } from '../input/capabilities.js';
import type { InputRouter } from '../input/router.js';
import { resolveCallOptions, type ResolvedCallOptions, type ResolvedClientOptions } from '../options.js';
import type { TaskView } from '../../engine/task-view.js';
import { assumeFrom, checkReference, placeholderTask } from './reference.js';
import type { LiveTasks } from './registry.js';
import { armDeadlineAndSignal } from '../call/deadline-signal.js';

/** The parts of its TaskClient that `resume()` uses (see facade/parts.ts). */
export interface ResumeParts {
  readonly config: ResolvedClientOptions;
  /** What a call's requests declare it answers ([E35]). */
  readonly router: Pick<InputRouter, 'answersFor'>;
  readonly engine: TaskEngine;
  readonly live: LiveTasks;
  readonly port: SessionPort;
  readonly instrument: ClientInstrument | undefined;
}

/**
 * The handle for `target` (its existing one when the client already tracks it, with this resume's
 * deadline and signal armed on it as well). Nothing is sent until the handle is observed or given
 * a deadline or signal.
 * @throws TaskOptionError for a malformed reference, or one made on a different server.
 */
export function resumeTask(parts: ResumeParts, target: string | TaskReference, options: ResumeOptions): TaskHandle {
  const { config, engine, live } = parts;
  const reference = checkReference(target, engine.wire);
  const call = resolveCallOptions(config, options);
  if (options.toolName !== undefined && typeof options.toolName !== 'string') {
    throw new TaskOptionError('Option "toolName" must be a string', { option: 'toolName', taskId: reference.taskId });
  }
  const existing = live.handleOf(reference.taskId);
  const tracked = existing === undefined ? undefined : engine.get(reference.taskId);
  if (existing !== undefined) {
    // The same handle, and this resume's own deadline and signal armed on it too (the earliest
    // deadline bounds the task): never dropped unseen. Its input callbacks stay its first ones.
    if (tracked !== undefined) arm(engine, call, tracked.toolName, config.clock.now(), tracked);
    return existing;
  }
  const named = reference.toolName ?? options.toolName;
  const toolName = named ?? 'unknown';
  const callbacks = call.callbacks;
  if (callbacks !== undefined) checkInputCapabilities(engine.wire, callbacks, toolName);
  // Only an accepted resume (every check above passed) changes what the client assumes of a
  // session that skipped the handshake.
  assumeFrom(reference, engine.wire);
  engine.refreshFeatures();
  // Synchronously, in the caller's turn: its context (an active span) is still current.
  const instrument = instrumentResume(parts.instrument, parts.port, engine.wire.kind, reference.taskId, named);
  const record = engine.track({ task: placeholderTask(reference) }, toolName, {
    provisional: true,
    requestTimeoutMs: call.requestTimeoutMs,
    instrument,
    // [E35]: its requests declare what the resume's callbacks (or the client's) answer.
    input: callbacks === undefined ? undefined : parts.router.answersFor(callbacks),
  });
  const handle = live.adopt(record, call.callbacks, undefined, undefined, true);
  instrument?.handle?.(handle);
  // No judgement of expiry from the reference: its createdAt is on the server's clock, which may
  // be far from ours ([V11]). The first read tells: -32602 then ends the task as expired.
  arm(engine, call, toolName, config.clock.now(), record);
  return handle;
}

/** Arms a resume's deadline and signal on `record`; either one starts observing it. */
function arm(
  engine: TaskEngine,
  call: ResolvedCallOptions,
  toolName: string,
  startedAt: number,
  record: TaskView,
): void {
  armDeadlineAndSignal({ engine, call, toolName, startedAt }, record);
  if (call.timeoutMs !== undefined || call.signal !== undefined) engine.activate(record);
}
