/**
 * Input requests that name no task (2025-11-25 side channel): an `elicitation/create` or
 * `sampling/createMessage` without the related-task `_meta`. A conforming server tags a task's
 * questions ([V7]); some do not (mcp-go sends them straight from the tool, D14). Such a question is
 * tied to a call when the calls in flight on the connection leave no doubt:
 *
 * - exactly one call is in flight: it asked;
 * - several are, and exactly one of them is a task whose latest status is `input_required`, every
 *   other one being a task whose status is known (a call still waiting for its `tools/call` answer,
 *   or a request the host sent through the SDK client itself, might be the one asking), and no
 *   question tagged with its task came on the port yet (its server tags them: the task in
 *   `input_required` may be waiting for its own, and another be the one asking untagged).
 *
 * "In flight" counts, across every TaskClient on the SDK client (one view per session port): the
 * tasks they track, the calls whose `tools/call` has no answer yet (a creation whose
 * `CreateTaskResult` may follow, or a plain call), and the host's own open requests through the SDK
 * client (port/host-requests.ts). A task whose earlier questions came tagged is left out: its
 * server tags its questions, so an untagged one is not its.
 *
 * When it is not clear yet, and no plain call is among the calls in flight (a plain call, or a
 * request of the host's, shows no status that could clear it), the question waits, judged again
 * at every change that could settle it (a task entering or leaving `input_required`, a task
 * tracked or settled, a call answered): at most the longest poll interval of the tasks in flight
 * and {@link UNTAGGED_POLL_GRACE_MS} for that poll's answer (a status only a poll will show), at
 * least {@link EARLY_INPUT_WAIT_MS} while a `CreateTaskResult` is awaited, never more than
 * {@link UNTAGGED_WAIT_MAX_MS}. Then it is judged once more, and if still unclear it is
 * unattributed: `ambiguous` (several calls) or `no-task` (none of the library's).
 *
 * The judgement is made once per request, by the first TaskClient whose tap sees it; the others
 * (the request is passed along the taps) follow it. A TaskClient that closes ends its waits at once
 * with a last judgement.
 */
import { SlotSet } from '../../util/slot-set.js';
import type { InputCallbacks } from '../../api/index.js';
import { EARLY_INPUT_WAIT_MS } from './early.js';
import type { TaskView } from '../../engine/task-view.js';
import type { SessionPort } from '../../port/port.js';
import { onAbort } from '../../util/abort.js';
import type { UnattributedNote } from '../../wire/wire.js';
import { Scheduler, systemClock } from '../../util/scheduler.js';
import { keepShape } from '../../util/shapes.js';
import { TaskExpiredError, TaskNotFoundError } from '../../errors.js';
import { isTerminalStatus } from '../../types.js';
import { noop } from '../../util/noop.js';
import { TaskMemory } from '../../util/task-memory.js';

/** Longest wait of an untagged request for the call it belongs to to become clear (clock ms). */
export const UNTAGGED_WAIT_MAX_MS = 5_000;

/** Time allowed past a poll interval for that poll's answer to arrive (clock ms). */
export const UNTAGGED_POLL_GRACE_MS = 500;

/** A call whose `tools/call` has no answer yet. */
export interface PendingCall {
  /** Its index in {@link UntaggedInput.calls} (-1 while not in it). */
  untaggedSlot: number;
  readonly toolName: string;
  readonly callbacks: InputCallbacks | undefined;
  /** A task was asked for: the answer may make it a tracked task. */
  readonly asksTask: boolean;
  /** True once the caller gave the call up (abort, deadline, close). */
  abandoned(): boolean;
  /** A signal that fires when the caller gives the call up; `release()` detaches it. */
  stopSignal(): { readonly signal: AbortSignal; release(): void };
}

/** The parts of one TaskClient that the attribution uses (see facade/parts.ts). */
export interface UntaggedParts {
  readonly live: {
    /** The tasks it tracks. */
    records(): Iterable<TaskView>;
    /** True when a question of the task `taskId` came tagged with its id: its server tags them. */
    tags(taskId: string): boolean;
  };
  readonly engine: {
    /** The delay before the next poll of `record` (its poll interval as the engine applies it). */
    pollDelay(record: TaskView): number;
    /** Its timers (the client's clock). */
    readonly scheduler: Scheduler;
  };
}

/** Who an untagged request belongs to. */
export type Attribution =
  | { readonly kind: 'task'; readonly by: UntaggedInput; readonly taskId: string }
  | { readonly kind: 'call'; readonly by: UntaggedInput; readonly call: PendingCall }
  | ({ readonly kind: 'none' } & UnattributedNote);

/** A judgement: an attribution, or `wait` when it may still become clear. */
type Judgement = Attribution | { readonly kind: 'wait'; readonly boundMs: number };

/** The calls in flight on one port, across its TaskClients, and the untagged requests being judged. */
class PortCalls {
  readonly sources = new Set<UntaggedInput>();
  /** Re-judges of the requests waiting. */
  private readonly waiting = new Set<() => void>();
  /**
   * The attribution of each request, by its signal: one per inbound request, the same for every
   * tap. Not by its params: an in-process server may send the same params object twice (a
   * constant question), and the second question is judged on its own.
   */
  private readonly decided = new WeakMap<AbortSignal, Promise<Attribution>>();
  private queued = false;
  /**
   * A question tagged with its task came on the port: its server tags its tasks' questions, and a
   * task in `input_required` may wait for its own, queued for its `tasks/result`: the only one in
   * `input_required` is no longer taken to be the one asking untagged.
   */
  tagged = false;

  constructor(private readonly port: SessionPort) {}

  /** Something that may settle a waiting request changed: each is judged again (once per turn). */
  changed(): void {
    if (this.waiting.size === 0 || this.queued) return;
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      for (const rejudge of [...this.waiting]) rejudge();
    });
  }

  /** The attribution of the request whose signal is `signal`, judged by `by` unless another TaskClient did. */
  attribute(by: UntaggedInput, signal: AbortSignal): Promise<Attribution> {
    let decision = this.decided.get(signal);
    if (decision === undefined) {
      decision = this.judgeOver(by, signal);
      this.decided.set(signal, decision);
    }
    return decision;
  }

  private judgeOver(by: UntaggedInput, signal: AbortSignal): Promise<Attribution> {
    const first = this.judge(false);
    if (first.kind !== 'wait') return Promise.resolve(first);
    return new Promise<Attribution>((resolve) => {
      let done = false;
      let offAbort = (): void => {};
      let offClose = (): void => {};
      const finish = (last: boolean): void => {
        if (done) return;
        const judgement = this.judge(last);
        if (judgement.kind === 'wait') return;
        done = true;
        this.waiting.delete(rejudge);
        by.scheduler.cancel(timer);
        offAbort();
        offClose();
        resolve(judgement);
      };
      const rejudge = (): void => finish(false);
      const timer = by.scheduler.after(first.boundMs, () => finish(true));
      this.waiting.add(rejudge);
      // The server gave the request up, or the TaskClient judging it closes: judge it now.
      offAbort = onAbort(signal, () => finish(true));
      offClose = by.whenClosed(() => finish(true));
      if (done) {
        offAbort();
        offClose();
      }
    });
  }

  /** Judges now; `last` forbids waiting. Builds no object per call (thousands may be in flight). */
  private judge(last: boolean): Judgement {
    const hostRequests = this.port.closed ? 0 : this.port.hostRequests();
    let inFlight = 0;
    let unknown = hostRequests;
    let waitingForInput = 0;
    // The last call seen (the only one, when there is one), and the last task in input_required.
    let lastSource: UntaggedInput | undefined;
    let lastCall: PendingCall | undefined;
    let lastTask: string | undefined;
    let askingSource: UntaggedInput | undefined;
    let askingTask: string | undefined;
    let creating = false;
    // Calls no status will ever explain (plain calls, the host's requests): only their end would.
    let plain = hostRequests;
    let longestPoll = 0;
    let letGo = 0;
    for (const source of this.sources) {
      letGo += source.letGo.size;
      const calls = source.calls;
      for (let i = 0; i < calls.size; i += 1) {
        const call = calls.at(i);
        inFlight += 1;
        unknown += 1;
        if (call.asksTask) creating = true;
        else plain += 1;
        lastSource = source;
        lastCall = call;
        lastTask = undefined;
      }
      for (const record of source.parts.live.records()) {
        if (record.settlement !== undefined || source.parts.live.tags(record.taskId)) continue;
        inFlight += 1;
        lastSource = source;
        lastCall = undefined;
        lastTask = record.taskId;
        if (record.provisional) {
          unknown += 1;
          continue;
        }
        if (!last) longestPoll = Math.max(longestPoll, source.parts.engine.pollDelay(record));
        if (record.task.status === 'input_required') {
          waitingForInput += 1;
          askingSource = source;
          askingTask = record.taskId;
        }
      }
    }
    if (inFlight === 1 && hostRequests === 0 && letGo === 0 && lastSource !== undefined) {
      if (lastTask !== undefined) return { kind: 'task', by: lastSource, taskId: lastTask };
      // A creation under way may still bring its task (and the handle for the callback).
      if (!last && lastCall!.asksTask) return { kind: 'wait', boundMs: EARLY_INPUT_WAIT_MS };
      return { kind: 'call', by: lastSource, call: lastCall! };
    }
    // A task let go may be the one asking: no task is then alone in input_required for sure.
    if (waitingForInput === 1 && unknown === 0 && letGo === 0 && !this.tagged && askingSource !== undefined) {
      return { kind: 'task', by: askingSource, taskId: askingTask! };
    }
    const none = (reason: UnattributedNote['reason']): Attribution => ({
      kind: 'none',
      reason,
      inFlight,
      waitingForInput,
      hostRequests,
    });
    if (inFlight === 0) return none('no-task');
    if (last || plain > 0) return none('ambiguous');
    const polled = longestPoll > 0 ? longestPoll + UNTAGGED_POLL_GRACE_MS : 0;
    const boundMs = Math.min(UNTAGGED_WAIT_MAX_MS, Math.max(polled, creating ? EARLY_INPUT_WAIT_MS : 0));
    return boundMs > 0 ? { kind: 'wait', boundMs } : none('ambiguous');
  }
}

const PORTS = new WeakMap<SessionPort, PortCalls>();

function callsOn(port: SessionPort): PortCalls {
  let calls = PORTS.get(port);
  if (calls === undefined) PORTS.set(port, (calls = new PortCalls(port)));
  return calls;
}

/** One TaskClient's share of the attribution of untagged input. */
export class UntaggedInput {
  /** Its calls whose `tools/call` has no answer yet. */
  readonly calls = new SlotSet<'untaggedSlot', PendingCall>('untaggedSlot');
  private port: PortCalls | undefined = undefined;
  private readonly closeListeners = new Set<() => void>();
  private closed = false;

  /**
   * Tasks this client let go while they may still run on the server (detached, or given up by a
   * deadline, an abort or `close()` without a confirmed cancel), until their ttl has passed (for
   * good, for an unlimited one): a question such a task asks, untagged, belongs to none of
   * the calls in flight, so while one may still ask, no untagged question is attributed to a call
   * for being the only one.
   */
  readonly letGo = new TaskMemory<undefined>(() => this.scheduler.now());

  constructor(readonly parts: UntaggedParts) {}

  /** A task of this client settled: remembered in {@link UntaggedInput.letGo} when it may still run. */
  settled(record: TaskView): void {
    const settlement = record.settlement;
    const error = settlement?.ok === false ? settlement.error : undefined;
    if (
      !isTerminalStatus(record.task.status) &&
      error !== undefined &&
      !(error instanceof TaskExpiredError || error instanceof TaskNotFoundError)
    ) {
      this.letGo.add(record.taskId, record.task.ttl, undefined);
    }
    this.changed();
  }

  /** Its timers. */
  get scheduler(): Scheduler {
    return this.parts.engine.scheduler;
  }

  /** Joins the view of `port` (the current connection); returns the undo. */
  attach(port: SessionPort): () => void {
    const calls = callsOn(port);
    calls.sources.add(this);
    this.port = calls;
    return () => {
      calls.sources.delete(this);
      if (this.port === calls) this.port = undefined;
      calls.changed();
    };
  }

  /** A call's `tools/call` was sent: it is in flight until {@link UntaggedInput.remove}. */
  add(call: PendingCall): void {
    this.calls.add(call);
  }

  /** A call's `tools/call` was answered (or failed, or its creation ended); idempotent. */
  remove(call: PendingCall): void {
    if (this.calls.delete(call)) this.changed();
  }

  /** A question tagged with its task came (see {@link PortCalls.tagged}). */
  tagged(): void {
    if (this.port !== undefined) this.port.tagged = true;
  }

  /** A change that may settle a waiting request (a task tracked, settled, or in or out of `input_required`). */
  changed(): void {
    this.port?.changed();
  }

  /** Who the untagged request whose signal is `signal` belongs to (see the module comment). */
  attribute(signal: AbortSignal): Promise<Attribution> {
    const port = this.port;
    if (port === undefined || this.closed) {
      return Promise.resolve({ kind: 'none', reason: 'no-task', inFlight: 0, waitingForInput: 0, hostRequests: 0 });
    }
    return port.attribute(this, signal);
  }

  /** Calls `listener` once when this client closes; returns the undo. */
  whenClosed(listener: () => void): () => void {
    if (this.closed) {
      listener();
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => {
      this.closeListeners.delete(listener);
    };
  }

  /** The client closes: the requests it is judging are judged now, for good. */
  close(): void {
    this.closed = true;
    for (const listener of [...this.closeListeners]) listener();
    this.closeListeners.clear();
  }
}

/** What a task creation under way offers (`early.ts`'s `Creation`). */
interface CreationLike {
  end(): void;
  abandon(taskId: string): () => void;
}

/**
 * A task creation under way whose call counts as in flight until the creation ends: after its task
 * is tracked, or once the answer to a given-up creation came (and its task's cancel was answered).
 * One object per creation, no closures.
 */
export class CreationInFlight implements CreationLike {
  constructor(
    private readonly creation: CreationLike,
    private readonly untagged: UntaggedInput,
    private readonly call: PendingCall,
  ) {}

  /** Counts `call` as in flight in `untagged` until `creation` ends. */
  static begin(creation: CreationLike, untagged: UntaggedInput, call: PendingCall): CreationInFlight {
    untagged.add(call);
    return new CreationInFlight(creation, untagged, call);
  }

  /** The creation settled (idempotent). */
  end(): void {
    this.creation.end();
    this.untagged.remove(this.call);
  }

  /** The creation was given up and `taskId` is being cancelled: ends it; returns the release. */
  abandon(taskId: string): () => void {
    const release = this.creation.abandon(taskId);
    this.untagged.remove(this.call);
    return release;
  }
}

// Its hidden class outlives an idle spell (util/shapes.ts): a creation of no call, counted nowhere.
keepShape(
  new CreationInFlight(
    { end: noop, abandon: () => noop },
    new UntaggedInput({
      live: { records: () => [], tags: () => false },
      engine: { pollDelay: () => 0, scheduler: new Scheduler(systemClock) },
    }),
    {
      untaggedSlot: -1,
      toolName: '',
      callbacks: undefined,
      asksTask: false,
      abandoned: () => true,
      stopSignal: () => ({ signal: AbortSignal.abort(), release: noop }),
    },
  ),
);
