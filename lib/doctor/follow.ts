/**
 * Following one task to its end, on either wire: `tasks/get` at the task's own pollInterval
 * (clamped to 25 ms - 5 s, so that the doctor neither floods a server that suggests 0 nor waits a
 * minute between reads), the blocking `tasks/result` on `input_required` (2025, [R29]), the
 * inline questions answered with `tasks/update` (extension, [E5]), until the task ends, the
 * server forgets it, or the bound passes.
 */
import { answerFor } from './inbound.js';
import type { Reply } from './reply.js';
import type { Session } from './session.js';
import { durationOf, isObject, isTerminal, seenTask, type SeenTask } from './shape.js';

/** One `tasks/get` and its reply. */
export interface Poll {
  readonly at: number;
  readonly reply: Reply;
  readonly task: SeenTask | undefined;
}

/** What following a task saw. */
export interface Followed {
  readonly polls: Poll[];
  /** The terminal snapshot, once a read showed one. */
  terminal: SeenTask | undefined;
  /** When a read first showed the task terminal. */
  terminalAt: number | undefined;
  /** Statuses in the order reads showed them (repeats dropped). */
  readonly statuses: string[];
  /** The error that ended following (the server forgot the task, or reads kept failing). */
  stoppedBy: Reply | undefined;
  /** The bound passed first. */
  timedOut: boolean;
  /** `tasks/update` replies (extension). */
  readonly updates: Reply[];
  /** Reads that showed `input_required` without `inputRequests` (extension). */
  bareInputRequired: number;
}

/** The poll interval to use after `task`: its own, clamped, or `fallback`. */
export function intervalOf(task: SeenTask | undefined, fallback: number): number {
  const suggested = durationOf(task?.pollInterval);
  return suggested === undefined ? fallback : Math.min(5_000, Math.max(25, suggested));
}

/** Options of {@link follow}. */
export interface FollowOptions {
  /** Stop at this time (`session.now()` clock). */
  readonly until: number;
  /** Called after each read. */
  readonly onPoll?: ((poll: Poll) => void | Promise<void>) | undefined;
  /** Stops following (before the next read) once it returns true. */
  readonly stop?: (() => boolean) | undefined;
}

/** Reads `taskId` until it ends, is forgotten, or `until` passes. */
export async function follow(s: Session, taskId: string, first: SeenTask, options: FollowOptions): Promise<Followed> {
  const seen: Followed = {
    polls: [],
    terminal: isTerminal(first.status) ? first : undefined,
    terminalAt: isTerminal(first.status) ? s.now() : undefined,
    statuses: first.status === undefined ? [] : [first.status],
    stoppedBy: undefined,
    timedOut: false,
    updates: [],
    bareInputRequired: 0,
  };
  let interval = intervalOf(first, 250);
  let failures = 0;
  if (first.status === 'input_required') await onInput(s, taskId, first, seen);
  while (seen.terminal === undefined && options.stop?.() !== true) {
    const left = options.until - s.now();
    if (left <= 0) {
      seen.timedOut = true;
      break;
    }
    await s.sleep(Math.min(interval, left));
    const reply = await s.call('tasks/get', { taskId });
    const task = reply.ok ? seenTask(reply.result, s.wire) : undefined;
    const poll: Poll = { at: reply.at, reply, task };
    seen.polls.push(poll);
    await options.onPoll?.(poll);
    if (!reply.ok) {
      failures += 1;
      if ((reply.kind === 'server' && reply.code === -32602) || failures >= 5 || reply.kind === 'closed') {
        if (reply.kind === 'server' && reply.code === -32602) s.ledger.gone(taskId);
        seen.stoppedBy = reply;
        break;
      }
      continue;
    }
    failures = 0;
    s.ledger.seen(taskId, task?.status);
    interval = intervalOf(task, interval);
    if (task?.status !== undefined && task.status !== seen.statuses.at(-1)) seen.statuses.push(task.status);
    if (task?.status === 'input_required') await onInput(s, taskId, task, seen);
    if (isTerminal(task?.status)) {
      seen.terminal = task;
      seen.terminalAt = reply.at;
    }
  }
  return seen;
}

/** A task asks for input: open the blocking `tasks/result` (2025) or answer its `inputRequests` (extension). */
async function onInput(s: Session, taskId: string, task: SeenTask, seen: Followed): Promise<void> {
  if (s.wire === '2025-11-25') {
    s.openResult(taskId);
    return;
  }
  const requests = task.raw.inputRequests;
  if (!isObject(requests)) {
    seen.bareInputRequired += 1;
    return;
  }
  for (const [key, request] of Object.entries(requests)) {
    const method = isObject(request) && typeof request.method === 'string' ? request.method : 'unknown';
    const question = s.noteInlineQuestion(taskId, key, method);
    if (question.answeredAt !== undefined || s.inputMode === 'hold') continue;
    question.answeredAt = s.now();
    seen.updates.push(await s.call('tasks/update', { taskId, inputResponses: { [key]: answerFor(method) } }));
  }
}

/** The distinct poll intervals `tasks` carried, in order (`undefined` for a task without one). */
export function pollValues(tasks: ReadonlyArray<SeenTask | undefined>): unknown[] {
  const values: unknown[] = [];
  for (const task of tasks)
    if (task !== undefined && !values.includes(task.pollInterval)) values.push(task.pollInterval);
  return values;
}
