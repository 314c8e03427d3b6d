/**
 * Input requests that overtake their task's `CreateTaskResult` (2025-11-25 side-channel input,
 * [V7]: the server may ask before it answers the `tools/call`). Such a request waits, briefly,
 * until the task is tracked, so it reaches the callbacks of the call that owns it rather than a
 * client-level one.
 *
 * The wait is per session port, not per TaskClient: several TaskClients may share one SDK client,
 * and the request reaches whichever TaskClient's tap runs first. So the creations in flight are
 * counted across every TaskClient on the port ({@link PortCreations}), and a task tracked by any of
 * them wakes the request; the TaskClient that waited then passes it on to the owner.
 *
 * Two more ways out of the wait ([V7], [R31]):
 * - the TaskClient that holds the request closes: it passes the request on, as it would one that
 *   arrived after it closed (the next TaskClient's tap may hold it in turn; none of the closed
 *   client's callbacks runs);
 * - the creation is given up (an abort, a deadline, `close()`) and the task it made anyway is being
 *   cancelled: the request is refused as for a task that ended locally, never shown to a callback.
 */
import { SlotSet } from '../../util/slot-set.js';
import type { Scheduler, Timer } from '../../util/scheduler.js';
import type { SessionPort } from '../../port/port.js';
import { keepShape } from '../../util/shapes.js';
import { noop } from '../../util/noop.js';

/** Longest wait of an input request for its task's `CreateTaskResult` (clock ms). */
export const EARLY_INPUT_WAIT_MS = 1_000;

/**
 * How a held request goes on: `go` routes it as usual (its task is tracked, or the wait is over);
 * `pass` leaves it to the next tap or the SDK (the TaskClient that held it closed); `drop` refuses
 * it (its task is being cancelled because its call was given up).
 */
export type EarlyDecision = 'go' | 'pass' | 'drop';

/**
 * The decision of a wait, read when the request goes on (a `close()` that comes between the wake-up
 * and the routing still passes it on).
 */
export type EarlyVerdict = () => EarlyDecision;

/** The task creations in flight on one port, across every TaskClient that shares it. */
export class PortCreations {
  private inFlight = 0;
  /** Wake-ups of the requests waiting for a task, by task id. */
  private readonly waiting = new Map<string, Set<(decision: 'go' | 'drop') => void>>();
  /** Tasks of given-up creations whose `tasks/cancel` is under way (count per id). */
  private readonly cancelling = new Map<string, number>();

  /**
   * True while a request for a task no TaskClient tracks must be looked at before it is routed:
   * some TaskClient on the port waits for a `CreateTaskResult`, or a task of a given-up creation is
   * being cancelled.
   */
  get busy(): boolean {
    return this.inFlight > 0 || this.cancelling.size > 0;
  }

  /** True while some TaskClient on the port waits for a `CreateTaskResult`. */
  get creating(): boolean {
    return this.inFlight > 0;
  }

  /** True while `taskId`, made by a given-up creation, is being cancelled. */
  isCancelling(taskId: string): boolean {
    return this.cancelling.has(taskId);
  }

  /** Marks a creation as under way; each is ended by exactly one {@link PortCreations.end}. */
  begin(): void {
    this.inFlight += 1;
  }

  /** A creation settled. */
  end(): void {
    if (this.inFlight === 0) return;
    this.inFlight -= 1;
    // No creation can bring a task any more: every waiting request stops waiting.
    if (this.inFlight === 0) for (const taskId of [...this.waiting.keys()]) this.tracked(taskId);
  }

  /** A TaskClient on the port now tracks `taskId`: the requests waiting for it go on. */
  tracked(taskId: string): void {
    this.wakeAll(taskId, 'go');
  }

  /**
   * `taskId` was made by a creation given up before its answer, and the library is cancelling it:
   * the requests waiting for it, and those that come until `release()`, are refused.
   * @returns the release, once the `tasks/cancel` settled (idempotent).
   */
  cancel(taskId: string): () => void {
    this.cancelling.set(taskId, (this.cancelling.get(taskId) ?? 0) + 1);
    this.wakeAll(taskId, 'drop');
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.cancelling.get(taskId) ?? 1) - 1;
      if (left > 0) this.cancelling.set(taskId, left);
      else this.cancelling.delete(taskId);
    };
  }

  private wakeAll(taskId: string, decision: 'go' | 'drop'): void {
    const wakes = this.waiting.get(taskId);
    if (wakes === undefined) return;
    this.waiting.delete(taskId);
    for (const wake of wakes) wake(decision);
  }

  /** Calls `wake` once `taskId` is tracked, is being cancelled, or no creation is left; returns the undo. */
  watch(taskId: string, wake: (decision: 'go' | 'drop') => void): () => void {
    let wakes = this.waiting.get(taskId);
    if (wakes === undefined) this.waiting.set(taskId, (wakes = new Set()));
    wakes.add(wake);
    const set = wakes;
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.waiting.get(taskId) === set) this.waiting.delete(taskId);
    };
  }

  /** Number of task ids some request waits for (for tests). */
  get watched(): number {
    return this.waiting.size;
  }
}

const PORTS = new WeakMap<SessionPort, PortCreations>();

/** The creations of `port` (one object per port, shared by its TaskClients). */
export function creationsOn(port: SessionPort): PortCreations {
  let creations = PORTS.get(port);
  if (creations === undefined) PORTS.set(port, (creations = new PortCreations()));
  return creations;
}

/** What else counts a creation: the engine, which keeps early notifications while one is under way. */
export interface CreationCounter {
  beginCreate(): void;
  endCreate(): void;
}

/**
 * One task creation under way, counted on its port (early input) and by the engine (early
 * notifications) until {@link Creation.end}, which is idempotent. One object per call, no closures.
 */
export class Creation {
  private ended = false;
  /** Its index in its owner's set (util/slot-set.ts). */
  ownerSlot = -1;

  constructor(
    private readonly owner: SlotSet<'ownerSlot', Creation>,
    private readonly port: PortCreations,
    private readonly engine: CreationCounter,
  ) {}

  /** Marks a creation as under way in `owner`, on `port` and in `engine`. */
  static begin(owner: SlotSet<'ownerSlot', Creation>, port: PortCreations, engine: CreationCounter): Creation {
    const creation = new Creation(owner, port, engine);
    owner.add(creation);
    port.begin();
    engine.beginCreate();
    return creation;
  }

  /** The creation settled (or its client closed). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.owner.delete(this);
    this.port.end();
    this.engine.endCreate();
  }

  /**
   * The creation was given up, and the task it made anyway (`taskId`) is being cancelled: requests
   * for that task are refused until `release()` (call it once the `tasks/cancel` settled), and the
   * creation ends. Requests held for it are refused rather than routed to a client-level callback.
   */
  abandon(taskId: string): () => void {
    const release = this.port.cancel(taskId);
    this.end();
    return release;
  }
}

// Its hidden class outlives an idle spell (util/shapes.ts): a creation counted nowhere.
keepShape(new Creation(new SlotSet('ownerSlot'), new PortCreations(), { beginCreate: noop, endCreate: noop }));

/**
 * One TaskClient's share: its creations on the port, and its early input requests, each waiting on
 * its own timer. `close()` ends both (a creation whose answer never comes must not keep the other
 * TaskClients' requests waiting).
 */
export class EarlyInput {
  /** The wake-up of each waiting request, with what it must undo. */
  private readonly waiting = new Map<
    (decision: EarlyDecision) => void,
    { readonly timer: Timer; readonly unwatch: () => void }
  >();
  /** This client's creations still under way. */
  private readonly creating = new SlotSet<'ownerSlot', Creation>('ownerSlot');
  /** Set by {@link EarlyInput.close}: every verdict is `pass` from then on. */
  private closed = false;

  constructor(private readonly scheduler: Scheduler) {}

  /** Marks a creation of this client as under way on `port` and in `engine`. */
  begin(port: PortCreations, engine: CreationCounter): Creation {
    return Creation.begin(this.creating, port, engine);
  }

  /** Number of requests waiting. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Resolves when `taskId` is tracked by a TaskClient on the port (`go`), when no creation is under
   * way there any more (`go`), after {@link EARLY_INPUT_WAIT_MS} (`go`), when the task is being
   * cancelled because its creation was given up (`drop`), or when this client closes (`pass`),
   * whichever comes first; at once when no creation is under way, when the task is being cancelled,
   * or after close. The verdict is read when the request goes on: `pass` once this client closed,
   * whatever woke it. Every path removes the request's timer and entries.
   */
  wait(creations: PortCreations, taskId: string): Promise<EarlyVerdict> {
    const verdict =
      (decision: EarlyDecision): EarlyVerdict =>
      () =>
        this.closed ? 'pass' : decision;
    if (this.closed) return Promise.resolve(verdict('pass'));
    if (creations.isCancelling(taskId)) return Promise.resolve(verdict('drop'));
    if (!creations.creating) return Promise.resolve(verdict('go'));
    return new Promise((resolve) => {
      const wake = (decision: EarlyDecision = 'go'): void => {
        const entry = this.waiting.get(wake);
        if (entry === undefined) return;
        this.waiting.delete(wake);
        this.scheduler.cancel(entry.timer);
        entry.unwatch();
        resolve(verdict(decision));
      };
      this.waiting.set(wake, {
        timer: this.scheduler.after(EARLY_INPUT_WAIT_MS, wake),
        unwatch: creations.watch(taskId, wake),
      });
    });
  }

  /**
   * On close: every request this client holds is passed on (never to this client's callbacks: the
   * next TaskClient on the port, or the SDK, gets it, [V7]), then this client's creations end.
   */
  close(): void {
    this.closed = true;
    for (const wake of [...this.waiting.keys()]) wake('pass');
    for (const creation of this.creating.snapshot()) creation.end();
  }
}
