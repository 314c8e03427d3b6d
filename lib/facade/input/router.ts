/**
 * Per-task input: routes the server's elicitation and sampling requests to the callbacks of the
 * call that owns the task. Three paths bring them, all to the same callbacks:
 * - `request`: a side-channel request tagged with its task (2025-11-25, [R28]-[R31], [V7]);
 *   an untagged one (mcp-go, D14) goes to the call it is attributed to when the calls in flight
 *   leave no doubt (untagged.ts), else, like one for an unknown task, to the TaskClient-level
 *   callbacks (with an `inputUnattributed` event), then to whatever handler the SDK client had;
 * - `task-update`: a task's `inputRequests`, answered with `tasks/update` (extension, [E3]-[E5]);
 * - `retry`: input a server asks for before it answers a call at all (multi round-trip, [E17]).
 * A callback that never answers is abandoned when its task ends.
 */
import type { InputCallbacks, InputContext } from '../../api/index.js';
import { AbandonedError, abandoned } from './abandon.js';
import { inputMethod, runCallback } from './callback-run.js';
import { creationsOn, type EarlyVerdict } from './early.js';
import type { JsonObject, SessionPort } from '../../port/port.js';
import { receiverClaims, unservedTaskRequest } from './receiver-seam.js';
import type { Asking, InputOwner, RouterParts } from './router-parts.js';
import { isObject } from '../../util/json.js';
import { requestRefusal } from '../../util/request-shape.js';
import {
  ANSWERS_ELICITATION,
  ANSWERS_SAMPLING,
  type InlineInput,
  type InputAnswers,
  type InputKind,
  type InputRequest,
} from '../../wire/wire.js';
import { rpcThrowable } from '../../util/rpc-error.js';
import type { Attribution, UntaggedInput } from './untagged.js';

/**
 * Routes input requests to the right callback. As {@link InputAnswers}, it says what the client
 * answers for any call: what a request declares when its call has no callbacks of its own ([E35]).
 */
export class InputRouter implements InputAnswers {
  /** Callbacks tried last, after the call's and the client's (the receiver's, while it serves). */
  private fallback: () => InputCallbacks | undefined = () => undefined;

  constructor(private readonly parts: RouterParts) {}

  /** The client-level callbacks. */
  private get defaults(): InputCallbacks {
    return this.parts.config.callbacks;
  }

  /** The owner of a tracked task, if this client tracks it. */
  private owner(taskId: string): InputOwner | undefined {
    return this.parts.live.inputOwner(taskId);
  }

  /** True once the client's `close()` began. */
  private closed(): boolean {
    return this.parts.closeSignal.signal.aborted;
  }

  /** True once the client's `close()` began: requests pass on, and no callback is asked. */
  get closing(): boolean {
    return this.closed();
  }

  /**
   * Resolves when the task with this id is tracked (by any TaskClient on the same SDK client), or
   * when it cannot be any more (no creation under way there, or a short bound passed), with how
   * the request goes on (see `EarlyDecision`): routed (`go`), passed on because this client closed
   * (`pass`), or refused because its task is being cancelled (`drop`); `undefined` when there is
   * nothing to wait for. An input request may overtake its CreateTaskResult: it waits while any
   * TaskClient on this port has a creation under way, so it reaches the owner whatever order the
   * taps run in.
   */
  private whenTracked(taskId: string): Promise<EarlyVerdict> | undefined {
    const creations = creationsOn(this.parts.port);
    return creations.busy ? this.parts.earlyInput.wait(creations, taskId) : undefined;
  }

  /**
   * For a receiver task tied to the server's task `taskId` ({@link ReceiverHost.whenTracked}):
   * when no call tracks that task yet and a creation is under way, a wait for it, resolving with
   * the verdict then; `undefined` when there is nothing to wait for.
   */
  untilTracked(taskId: string): Promise<'go' | 'pass' | 'drop'> | undefined {
    if (this.owner(taskId) !== undefined) return undefined;
    return this.whenTracked(taskId)?.then((verdict) => verdict());
  }

  /** Sets where the callbacks tried last come from (`undefined` from it: none). */
  setFallback(callbacks: () => InputCallbacks | undefined): void {
    this.fallback = callbacks;
  }

  /**
   * Answers `request`, or returns (or resolves to) `undefined` to leave it to the SDK client's own
   * handler. A request tagged with a task whose `CreateTaskResult` has not been processed yet (the
   * server may send it first) waits, briefly, for that task, so it reaches the call's own
   * callback rather than the client-level one; when another TaskClient on the same SDK client
   * turns out to own it, it is passed on to that one. A request held when this client closes is
   * passed on too, as one arriving after `close()` is: none of this client's callbacks runs after
   * it closed ([V7], [R31]). One held for a task whose call was given up, and which the library is
   * cancelling, is refused like a request for a task that ended locally (-32603 "no longer
   * needed"), without asking any callback; so is one for a tracked task being stopped or cancelled.
   */
  route(request: InputRequest): Promise<Record<string, unknown> | undefined> | undefined {
    // A task-augmented request a receiver serves (TaskClient.serve) is the receiver's.
    if (receiverClaims(this.parts.port, request.kind, request.params) || this.closed()) return undefined;
    // A task request of a declared kind nobody serves is refused rather than answered.
    const refusal = unservedTaskRequest(this.parts.port, request.kind, request.params);
    if (refusal !== undefined) return Promise.reject(refusal);
    const taskId = request.taskId;
    const untagged = this.parts.untagged;
    if (taskId === undefined) {
      return untagged
        .attribute(request.signal)
        .then((attribution) => this.answerUntagged(request, attribution, untagged));
    }
    // Its server tags its tasks' questions: untagged ones are judged knowing it (untagged.ts).
    untagged.tagged();
    const early = this.owner(taskId) !== undefined ? undefined : this.whenTracked(taskId);
    if (early === undefined) return this.answer(request);
    return early.then((verdict) => {
      const decision = verdict();
      // This client's close() began while the request was held ([V7], [R31]): it is passed on, as
      // one arriving after close() is, even though close() marks the held requests only later (it
      // ends its creations last, so that other clients' held requests are not woken too soon).
      if (decision === 'pass' || this.closed() || request.ownedElsewhere?.() === true) return undefined;
      if (decision === 'drop') throw new AbandonedError();
      return this.answer(request);
    });
  }

  private answer(request: InputRequest): Promise<Record<string, unknown>> | undefined {
    const taskId = request.taskId;
    const owner = taskId === undefined ? undefined : this.owner(taskId);
    if (owner !== undefined) this.parts.live.markTagged(taskId!);
    // A task this client ended may still run and ask (D10): no callback that never knew it (the
    // client's) answers it; refused as a task that ended locally is (-32603 "no longer needed").
    else if (taskId !== undefined && this.parts.live.ended(taskId)) return Promise.reject(new AbandonedError());
    return this.ask(request.kind, request.params, {
      taskId,
      owner,
      delivery: 'request',
      signal: request.signal,
      id: request.id,
      port: request.port,
    });
  }

  /**
   * Answers a request that named no task, as `attribution` says: through the call it belongs to
   * (its answer still untagged: the server named no task, [R31]), or, unattributed, through the
   * client's or `serve()`'s callback, with the `inputUnattributed` event and the cause noted for
   * the error the server gets if nobody answers (D14). A call of another TaskClient's is passed on
   * to it; one whose caller gave up is refused like a task that ended.
   */
  private answerUntagged(
    request: InputRequest,
    attribution: Attribution,
    untagged: UntaggedInput,
  ): Promise<Record<string, unknown>> | undefined {
    if (this.closed()) return undefined;
    const { kind, params, signal, id, port } = request;
    if (attribution.kind === 'none') {
      const { reason, inFlight, waitingForInput, hostRequests } = attribution;
      const answeredBy =
        pick(this.defaults, kind) !== undefined
          ? 'client'
          : pick(this.fallback(), kind) !== undefined
            ? 'serve'
            : undefined;
      // A request a callback here would get but that is refused first (params that break the
      // schema, a mode not declared: -32602, see ask()) is no input anybody is asked: like a
      // malformed tagged one, it is reported nowhere (no inputUnattributed, no error event).
      const refusal = answeredBy === undefined ? undefined : this.refusal(kind, params, port);
      if (refusal !== undefined) return Promise.reject(rpcThrowable(-32602, refusal));
      request.unattributed?.({ reason, inFlight, waitingForInput, hostRequests });
      this.parts.emitter.emit('inputUnattributed', {
        method: inputMethod(kind),
        reason,
        inFlight,
        waitingForInput,
        hostRequests,
        answeredBy,
      });
      return this.ask(kind, params, { taskId: undefined, owner: undefined, delivery: 'request', signal, id, port });
    }
    if (attribution.by !== untagged) return undefined;
    if (attribution.kind === 'task') {
      const taskId = attribution.taskId;
      return this.ask(kind, params, {
        taskId,
        owner: this.owner(taskId),
        delivery: 'request',
        signal,
        inferred: true,
        id,
        port,
      });
    }
    const call = attribution.call;
    if (call.abandoned()) return Promise.reject(new AbandonedError());
    const stop = call.stopSignal();
    const answer = this.ask(kind, params, {
      taskId: undefined,
      owner: undefined,
      call,
      delivery: 'request',
      signal,
      stop: stop.signal,
      inferred: true,
      id,
      port,
    });
    if (answer === undefined) stop.release();
    return answer?.finally(() => stop.release());
  }

  /**
   * Answers input that rides on a snapshot (`task-update`) or on a call's reply (`retry`), by key.
   * Keys of a kind this library cannot answer, or without a callback, are left out; the call's own
   * callbacks come first, then the client's.
   * @returns the answers by key (those that came; a callback that failed, or answered with the
   *   wrong shape, is reported and skipped).
   */
  async answerInline(
    items: readonly InlineInput[],
    about: {
      readonly taskId: string | undefined;
      readonly toolName: string;
      readonly callbacks: InputCallbacks | undefined;
    },
    delivery: 'task-update' | 'retry',
    signal: AbortSignal,
  ): Promise<Record<string, JsonObject>> {
    const owner = about.taskId === undefined ? undefined : this.owner(about.taskId);
    // Keys are the server's: "__proto__" is a legal one (an own key, from JSON.parse). Assigning it
    // on a plain object would set the prototype and send nothing; without a prototype it stays a key.
    const answers = Object.create(null) as Record<string, JsonObject>;
    await Promise.all(
      items.map(async (item) => {
        if (item.kind === undefined) return;
        const answer = this.ask(item.kind, item.params, {
          taskId: about.taskId,
          owner,
          call: about,
          delivery,
          signal,
          key: item.key,
        });
        if (answer === undefined) return;
        try {
          answers[item.key] = await answer;
        } catch {
          // Reported by ask() (a callback that threw, or an answer of the wrong shape: there is no
          // error to send instead of an answer, [E31]); an abandoned answer is simply not sent.
        }
      }),
    );
    return answers;
  }

  /**
   * The callback that answers a request of `kind` belonging to the server's task `taskId`, in the
   * routing order (the owning call's, the client's, then `serve()`'s): a receiver task runs the one
   * a side-channel request of the same task would reach.
   */
  callbackFor(
    kind: InputKind,
    taskId: string | undefined,
  ): ((params: never, context: InputContext) => unknown) | undefined {
    const owner = taskId === undefined ? undefined : this.owner(taskId);
    return this.chosen(kind, owner?.callbacks);
  }

  /**
   * Why no callback may be given this request of `kind` (params that break its type, an
   * elicitation in a mode the client on `port`, by default the current connection's, did not
   * declare), or `undefined` when one may.
   */
  refusal(kind: InputKind, params: Record<string, unknown>, port?: SessionPort): string | undefined {
    return requestRefusal(kind, params, (port ?? this.parts.port).clientCapabilities());
  }

  /**
   * {@link InputRouter.refusal} for an entry of `kind` riding on a message of the tasks extension,
   * which a callback answers: judged against what its request declared ([E35]), the SDK client's
   * own capability for `kind`, or an empty one (for elicitation, form mode only) when it declared
   * none, as the extension wire declares it.
   */
  inlineRefusal(kind: InputKind, params: Record<string, unknown>): string | undefined {
    const own = this.parts.port.clientCapabilities()[kind];
    return requestRefusal(kind, params, { [kind]: isObject(own) ? own : {} });
  }

  /** The callbacks that would answer `kind` for a call, if any. */
  hasCallback(kind: InputKind, callbacks: InputCallbacks | undefined): boolean {
    return this.chosen(kind, callbacks) !== undefined;
  }

  /** The kinds a callback answers for a call with no callbacks of its own (the client's, a receiver's). */
  answered(): number {
    return this.answeredWith(undefined);
  }

  /**
   * What the client answers for a call whose own callbacks are `callbacks`: what the call's requests
   * declare ([E35]), read when each is sent (a receiver may start serving meanwhile).
   */
  answersFor(callbacks: InputCallbacks): InputAnswers {
    return { answered: () => this.answeredWith(callbacks) };
  }

  /**
   * {@link InputAnswers.answered} for a call whose own callbacks are `callbacks`: as
   * {@link InputRouter.chosen} would pick, read once per request sent (no call per kind).
   */
  private answeredWith(callbacks: InputCallbacks | undefined): number {
    const client = this.parts.config.callbacks;
    const last = this.fallback();
    const elicits = (callbacks?.onElicitation ?? client.onElicitation ?? last?.onElicitation) !== undefined;
    const samples = (callbacks?.onSampling ?? client.onSampling ?? last?.onSampling) !== undefined;
    return (elicits ? ANSWERS_ELICITATION : 0) | (samples ? ANSWERS_SAMPLING : 0);
  }

  /** The first callback for `kind`: `callbacks`' (a call's), the client's, then the fallback's. */
  private chosen(
    kind: InputKind,
    callbacks: InputCallbacks | undefined,
  ): ((params: never, context: InputContext) => unknown) | undefined {
    return pick(callbacks, kind) ?? pick(this.defaults, kind) ?? pick(this.fallback(), kind);
  }

  /**
   * Asks the callback that answers `kind` for what `about` belongs to (see
   * {@link InputRouter.chosen}), when there is one and it may be given `params`; the run itself is
   * callback-run.ts's. `undefined`: no callback here answers it.
   */
  private ask(
    kind: InputKind,
    params: Record<string, unknown>,
    about: Asking,
  ): Promise<Record<string, unknown>> | undefined {
    // A task being stopped or cancelled: no callback is asked, and the server gets -32603 "no
    // longer needed" once the stop is over (servers keep running work after a cancel, D10: an
    // answer would be acted on).
    const ownSignal = about.owner?.signal;
    if (ownSignal?.aborted === true) return abandoned(ownSignal.reason);
    const callback = this.chosen(kind, about.owner?.callbacks ?? about.call?.callbacks);
    if (callback === undefined) return undefined;
    // A request of the server's own that the callback could not be given as typed, or an
    // elicitation in a mode this client did not declare, is refused with -32602 as the SDK client
    // refuses it (the library takes it off the transport before the SDK would see it). No callback
    // runs, so nothing is watched or reported: the server is told. Input riding on a task's update
    // or a call's reply never gets here so ([E31]): InlineAnswers treats it as unanswerable.
    if (about.delivery === 'request') {
      const refusal = this.refusal(kind, params, about.port);
      if (refusal !== undefined) return Promise.reject(rpcThrowable(-32602, refusal));
    }
    return runCallback(this.parts, kind, callback, params, about);
  }
}

function pick(
  callbacks: InputCallbacks | undefined,
  kind: InputKind,
): ((params: never, context: InputContext) => unknown) | undefined {
  return kind === 'elicitation' ? callbacks?.onElicitation : callbacks?.onSampling;
}
