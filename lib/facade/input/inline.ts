/**
 * Input that rides on messages rather than arriving as requests (the tasks extension): asked for
 * before a call is answered ([E17], delivery `retry`) or on a task's snapshots ([E3]-[E5],
 * delivery `task-update`). Both go through the same callbacks as side-channel requests.
 */
import type { TaskEngine } from '../../engine/engine.js';
import type { TaskView } from '../../engine/task-view.js';
import { TaskDetachedError, TaskNotSupportedError, describeRemoteCancel } from '../../errors.js';
import type { JsonObject } from '../../types.js';
import type { InlineInput } from '../../wire/wire.js';
import type { InputCallbacks } from '../../api/index.js';
import type { InputRouter } from './router.js';
import type { InputOwner } from './router-parts.js';

/** A signal that never aborts. */
const NEVER: AbortSignal = new AbortController().signal;

/** The parts of its TaskClient that inline input uses (see facade/parts.ts). */
export interface InlineParts {
  readonly router: InputRouter;
  /**
   * `inputOwner`: the owner of a tracked task, if this client tracks it; `created`: true when a
   * call on this client created it (not `resume()`).
   */
  readonly live: { inputOwner(taskId: string): InputOwner | undefined; created(taskId: string): boolean };
  /** Sends a task's answers (`deliverInput`) and reports what went wrong. */
  readonly engine: TaskEngine;
}

/** Answers inline input through the router, and sends task answers back through the engine. */
export class InlineAnswers {
  /** Each task's prompts still open (their callbacks answering), by key: what a withdrawal dismisses. */
  private readonly open = new WeakMap<TaskView, Map<string, AbortController>>();

  constructor(private readonly parts: InlineParts) {}

  private get router(): InputRouter {
    return this.parts.router;
  }

  /**
   * Why nobody here answers `item`, or `undefined` when a callback does. [E31]: an entry is treated
   * as the same request sent on its own, which the client would refuse (-32602) without asking a
   * callback when its params break the schema or it is an elicitation in a mode the request did not
   * declare ([E35]); an input response has no error form, so such an entry is unanswerable here.
   */
  private unanswerable(item: InlineInput, callbacks: InputCallbacks | undefined): string | undefined {
    if (item.kind === undefined) return 'this library cannot answer that kind of request';
    if (!this.router.hasCallback(item.kind, callbacks)) {
      return `pass ${item.kind === 'sampling' ? 'onSampling' : 'onElicitation'} to the call or the TaskClient`;
    }
    return this.router.inlineRefusal(item.kind, item.params);
  }

  /**
   * Answers the input a server asks for before it answers a call, through the call's callbacks
   * (then the client's). A request nobody here can answer fails the call with
   * `TaskNotSupportedError`: the server would only ask again.
   */
  beforeTask(
    toolName: string,
    callbacks: InputCallbacks | undefined,
    input: readonly InlineInput[],
    signal: AbortSignal | undefined,
  ): Promise<Record<string, JsonObject>> {
    for (const item of input) {
      const why = this.unanswerable(item, callbacks);
      if (why === undefined) continue;
      return Promise.reject(
        new TaskNotSupportedError(`The server asks for ${item.method} before it answers "${toolName}": ${why}`, {
          feature: item.kind ?? 'input',
          toolName,
        }),
      );
    }
    return this.router.answerInline(input, { taskId: undefined, toolName, callbacks }, 'retry', signal ?? NEVER);
  }

  /**
   * Answers the input requests that ride on a task's snapshots: each key through the call's
   * callback (then the client's), once ([E4]), each answer sent with `tasks/update` as soon as it
   * is ready. An answer whose `tasks/update` fails is not lost: the engine sends it again while
   * polls still list its key, within a bound, then fails the task ([E23]). A callback that throws
   * is reported on `error`, and its key is not asked again (there is no answer to send); an aborted
   * one (the task ended) sends nothing.
   *
   * A request nobody here can answer (a kind with no callback, or one this library has no callback
   * kind for, such as `roots/list`) is reported on `error`. When this client created the task with
   * a call, that also ends the task at once: it is cancelled on the server and settles with
   * `TaskNotSupportedError`, and none of the snapshot's requests is answered. Clients must treat
   * each entry as the standalone request ([E31]), and an input response has no error form, so the
   * task could only wait in `input_required` until its deadline or ttl (or for good). A task taken
   * up by `resume()` is only reported on: another client (its creator) may answer it, and it is
   * not this one's to cancel. A task already settled (detached) is left as it is.
   *
   * Requests replayed while the task is being tracked (notifications that overtook its
   * `CreateTaskResult`) come before its handle and its call's callbacks are registered, in the same
   * turn: they are taken up once that turn ends.
   */
  forTask(record: TaskView, items: readonly InlineInput[]): void {
    const owner = this.parts.live.inputOwner(record.taskId);
    if (owner === undefined) {
      queueMicrotask(() => {
        if (record.settlement !== undefined) return;
        // A request a later replayed snapshot of that turn withdrew is not asked: its withdrawal
        // found no prompt to dismiss, and none would ever dismiss it.
        const outstanding = record.outstandingInput;
        const asked = outstanding === undefined ? items : items.filter((item) => outstanding.has(item.key));
        if (asked.length > 0) this.answer(record, asked, this.parts.live.inputOwner(record.taskId));
      });
      return;
    }
    this.answer(record, items, owner);
  }

  /** {@link InlineAnswers.forTask} once the task's owner (if this client tracks it) is known. */
  private answer(record: TaskView, items: readonly InlineInput[], owner: InputOwner | undefined): void {
    const engine = this.parts.engine;
    const callbacks = owner?.callbacks;
    let answerable = true;
    for (const item of items) {
      const why = this.unanswerable(item, callbacks);
      if (why === undefined) continue;
      if (owner !== undefined && this.parts.live.created(record.taskId)) {
        this.giveUp(record, item, why);
        return;
      }
      engine.report(unanswered(record, item, why), record);
      answerable = false;
    }
    const about = { taskId: record.taskId, toolName: record.toolName, callbacks };
    const report = (error: unknown): void => engine.report(error, record);
    let prompts = this.open.get(record);
    if (prompts === undefined) this.open.set(record, (prompts = new Map<string, AbortController>()));
    for (const item of items) {
      if (!answerable && this.unanswerable(item, callbacks) !== undefined) continue;
      // Aborted when the server withdraws the request (see `withdrawn`).
      const withdrawn = new AbortController();
      const key = item.key;
      prompts.set(key, withdrawn);
      void this.router
        .answerInline([item], about, 'task-update', withdrawn.signal)
        .finally(() => {
          if (prompts.get(key) === withdrawn) prompts.delete(key);
        })
        .then((responses) => {
          const answered = Object.keys(responses).length > 0;
          // Dismissed unanswered (withdrawn, or given up while a stop or a cancel was under way):
          // asked again should a later read list the key again (a cancel that failed, say).
          if (!answered && (withdrawn.signal.aborted || owner?.signal.aborted === true))
            engine.inputDismissed(record, key);
          // After detach() the task runs on: its answer still goes out. After any other end, not.
          const settled = record.settlement;
          const detached = settled !== undefined && !settled.ok && settled.error instanceof TaskDetachedError;
          if (!answered || (settled !== undefined && !detached)) return;
          engine.deliverInput(record, responses);
        })
        .catch(report);
    }
  }

  /**
   * A current snapshot of `record` no longer lists the input requests `keys`: [E5], they are
   * withdrawn (the task back to working, or the keys replaced by others), and no answer to them is
   * sent. [E31]: each is treated as the same request sent on its own, whose callback's signal fires
   * when the server cancels it, so the user's prompt is dismissed too: its signal aborts.
   *
   * A snapshot no newer than the one that asked (the same `lastUpdatedAt`) withdraws them as well.
   * [A11] makes it the task as the client holds it (a tie goes to the later arrival): a server that
   * stamps whole seconds may take a question back, or replace it, within the second it asked. Left
   * open, such a prompt would stay up for as long as the task does not change again, which may be
   * never: a task that waits for the new key waits on a host that shows one prompt at a time. A
   * tie may also be a lagging read (a replica behind the one that asked); the dismissal then costs
   * no answer: a request dismissed unanswered is asked again once a read lists its key again (the
   * engine's `inputDismissed`), and an answer already given is kept until a newer read drops it.
   *
   * Looked at after the turn in which the snapshot was merged: a key listed again by another
   * snapshot of that turn stays asked, and no callback's abort listener runs inside the merge.
   */
  withdrawn(record: TaskView, keys: readonly string[]): void {
    const prompts = this.open.get(record);
    if (prompts === undefined) return;
    queueMicrotask(() => {
      for (const key of keys)
        if (record.outstandingInput?.has(key) === false)
          prompts.get(key)?.abort(new Error('The server withdrew the request'));
    });
  }

  /**
   * Ends a task that asks for what nobody here answers (see {@link InlineAnswers.forTask}): the
   * remote task cancelled, within the cancel grace, and the handle settled with the reason.
   */
  private giveUp(record: TaskView, item: InlineInput, why: string): void {
    const engine = this.parts.engine;
    // Reported as before, so that a watcher of `error` (lib/ai) learns of it at once.
    engine.report(unanswered(record, item, why), record);
    if (record.settlement !== undefined) return;
    void engine.giveUp(record, {
      cancelRemote: true,
      graceMs: engine.config.cancelGraceMs,
      error: (remote) => unanswered(record, item, why, describeRemoteCancel(remote)),
    });
  }
}

/** The error of a task that asks for `item`, which nobody here answers (`why`); `fate`: the remote task's. */
export function unanswered(
  record: TaskView,
  item: Pick<InlineInput, 'kind' | 'method'>,
  why: string,
  fate?: string,
): TaskNotSupportedError {
  return new TaskNotSupportedError(
    `The task asks for ${item.method}, and nobody here answers it: ${why}${fate === undefined ? '' : `; ${fate}`}`,
    { feature: item.kind ?? 'input', task: record.task, toolName: record.toolName },
  );
}
