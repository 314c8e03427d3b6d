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
 */
import type { Scheduler, Timer } from '../engine/scheduler.js';
import type { SessionPort } from '../port/port.js';

/** Longest wait of an input request for its task's `CreateTaskResult` (clock ms). */
export const EARLY_INPUT_WAIT_MS = 1_000;

/** The task creations in flight on one port, across every TaskClient that shares it. */
export class PortCreations {
  private inFlight = 0;
  /** Wake-ups of the requests waiting for a task, by task id. */
  private readonly waiting = new Map<string, Set<() => void>>();

  /** True while some TaskClient on the port waits for a `CreateTaskResult`. */
  get busy(): boolean {
    return this.inFlight > 0;
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
    const wakes = this.waiting.get(taskId);
    if (wakes === undefined) return;
    this.waiting.delete(taskId);
    for (const wake of wakes) wake();
  }

  /** Calls `wake` once `taskId` is tracked or no creation is left; returns the undo. */
  watch(taskId: string, wake: () => void): () => void {
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

  constructor(
    private readonly owner: Set<Creation>,
    private readonly port: PortCreations,
    private readonly engine: CreationCounter,
  ) {
    owner.add(this);
    port.begin();
    engine.beginCreate();
  }

  /** The creation settled (or its client closed). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.owner.delete(this);
    this.port.end();
    this.engine.endCreate();
  }
}

/**
 * One TaskClient's share: its creations on the port, and its early input requests, each waiting on
 * its own timer. `close()` ends both (a creation whose answer never comes must not keep the other
 * TaskClients' requests waiting).
 */
export class EarlyInput {
  /** The wake-up of each waiting request, with what it must undo. */
  private readonly waiting = new Map<() => void, { readonly timer: Timer; readonly unwatch: () => void }>();
  /** This client's creations still under way. */
  private readonly creating = new Set<Creation>();

  constructor(private readonly scheduler: Scheduler) {}

  /** Marks a creation of this client as under way on `port` and in `engine`. */
  begin(port: PortCreations, engine: CreationCounter): Creation {
    return new Creation(this.creating, port, engine);
  }

  /** Number of requests waiting. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Resolves when `taskId` is tracked by a TaskClient on the port, when no creation is under way
   * there any more, or after {@link EARLY_INPUT_WAIT_MS}, whichever comes first; at once when no
   * creation is under way. Every path removes the request's timer and entries.
   */
  wait(creations: PortCreations, taskId: string): Promise<void> {
    if (!creations.busy) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        const entry = this.waiting.get(wake);
        if (entry === undefined) return;
        this.waiting.delete(wake);
        this.scheduler.cancel(entry.timer);
        entry.unwatch();
        resolve();
      };
      this.waiting.set(wake, { timer: this.scheduler.after(EARLY_INPUT_WAIT_MS, wake), unwatch: creations.watch(taskId, wake) });
    });
  }

  /** On close: this client's creations end, and every request it holds goes on now. */
  close(): void {
    for (const creation of [...this.creating]) creation.end();
    for (const wake of [...this.waiting.keys()]) wake();
  }
}
