/**
 * Questions a task asks while a worker holds its job: each is published on the job's progress
 * and waits for an answer stored through `answerJobInput`, from any process. A question's id is
 * derived from what it asks, so the same pending question keeps its id when another worker
 * resumes the task and is asked again: an answer given meanwhile is not lost, and one a worker
 * took and then died with is sent by the next worker rather than asked of the user again (it is
 * stored with the job before it is sent), when the task still asks that same request (its
 * `inputRequests` key). Questions that ask the same thing at once are told apart by a count after
 * that id (`-2`, `-3`, …).
 */
import { createHash } from 'node:crypto';
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  ElicitationCallback,
  InputCallbacks,
  InputContext,
  SamplingCallback,
} from '../index.js';
import type { WatchedJob } from './control.js';
import type { PendingQuestion } from './types.js';

/** The id of a question: its kind and a hash of what it asks (its `_meta` aside). */
export function questionId(
  kind: PendingQuestion['kind'],
  params: ElicitRequestParams | CreateMessageRequestParams,
): string {
  const { _meta: _ignored, ...asked } = params;
  const digest = createHash('sha256').update(JSON.stringify(asked)).digest('hex').slice(0, 16);
  return `${kind === 'elicitation' ? 'e' : 's'}-${digest}`;
}

/** The `_meta` key in which a 2025-11-25 server names the task a request belongs to ([V7], [R31]). */
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

/**
 * `params` as the job shows them: without the related-task `_meta`, which holds the task id. The
 * job's progress names the task by its fingerprint only, and it reaches every `QueueEvents`
 * listener and dashboard (task ids are secrets); what the question asks is all kept.
 */
function shown<P extends ElicitRequestParams | CreateMessageRequestParams>(params: P): P {
  const meta = params._meta;
  if (meta === undefined || !Object.hasOwn(meta, RELATED_TASK_KEY)) return params;
  const { [RELATED_TASK_KEY]: _taskId, ...rest } = meta;
  const { _meta: _dropped, ...asked } = params;
  return (Object.keys(rest).length === 0 ? asked : { ...asked, _meta: rest }) as P;
}

/** Resolves when `signal` aborts (never removed: the signal of one question, short-lived). */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

/** The questions of one job run, and the callbacks that ask them. */
export class JobQuestions {
  private readonly pending = new Map<string, PendingQuestion>();
  /** Ids given to questions being reopened (not pending yet), so that twins get ids of their own. */
  private readonly opening = new Set<string>();

  constructor(
    private readonly control: WatchedJob,
    /** Called whenever the set of pending questions changes, and with each new question. */
    private readonly changed: (asked: PendingQuestion | undefined) => void,
    private readonly now: () => number,
  ) {}

  /** The questions waiting for an answer, oldest first. */
  list(): PendingQuestion[] {
    return [...this.pending.values()];
  }

  /**
   * The input callbacks of a call: `own` answers a kind in the worker when given; otherwise the
   * question waits on the job for `answerJobInput`.
   */
  callbacks(own: InputCallbacks): { onElicitation: ElicitationCallback; onSampling: SamplingCallback } {
    return {
      onElicitation: own.onElicitation ?? ((params, context) => this.ask<ElicitResult>('elicitation', params, context)),
      onSampling: own.onSampling ?? ((params, context) => this.ask<CreateMessageResult>('sampling', params, context)),
    };
  }

  private async ask<T>(
    kind: PendingQuestion['kind'],
    params: ElicitRequestParams | CreateMessageRequestParams,
    context: InputContext,
  ): Promise<T> {
    const { signal } = context;
    // What names this request for good: its key in the task's inputRequests on the tasks extension
    // ([E4]: a key is one request over the task's life). Nothing does on 2025-11-25 (a request
    // sent to a worker that died is not sent again), nor before a task exists (the call is made
    // again, and its requests are new).
    // The task's id goes with it: a key is unique within one task only, and a run that called the
    // tool again (its task lost) has a new task whose keys start over.
    const round =
      context.delivery === 'task-update' && context.key !== undefined
        ? `${context.taskId ?? ''}:${context.key}`
        : undefined;
    // Questions that ask the same thing at once (one prompt sampled twice, one confirmation for two
    // items) each get an id of their own: the first the derived id, the next ones a count after it.
    // Sharing one, only one of them could be answered and the others waited for good.
    const derived = questionId(kind, params);
    let id = derived;
    for (let n = 2; this.pending.has(id) || this.opening.has(id); n += 1) id = `${derived}-${n}`;
    // An answer another run took for this very request (it died, perhaps before the answer reached
    // the server, and the task still asks) is sent as it was: the user answered once, and is not
    // asked again. The same question asked in another round is a new request: it is asked. An
    // answer taken earlier for the same question marked its field taken (a second answer to that
    // one is refused): cleared before this question shows on the job. Redis away: it goes on, and
    // asks.
    this.opening.add(id);
    try {
      const stored = await Promise.race([this.control.stored(id, round).catch(() => undefined), aborted(signal)]);
      if (stored !== undefined) return stored as T;
      await Promise.race([this.control.reopen(id).catch(() => {}), aborted(signal)]);
    } finally {
      this.opening.delete(id);
    }
    const question: PendingQuestion = { id, kind, params: shown(params), askedAt: this.now() };
    this.pending.set(id, question);
    this.changed(question);
    try {
      // The shape was checked by answerJobInput; the library checks it again before sending.
      return (await this.control.answer(id, signal, round)) as T;
    } finally {
      this.pending.delete(id);
      this.changed(undefined);
    }
  }
}
