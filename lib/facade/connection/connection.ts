/**
 * The client's connection to the server: which wire (and SDK client) is in use, what happens
 * when it closes (tracking pauses, `connectionLost`), and how a new one takes over, by hand
 * (`TaskClient.reconnect`) or through the `reconnect` factory option, retried with backoff.
 * It also knows which SDK clients are the library's to close: the one `TaskClient.connect` made
 * and those the `reconnect` factory made at its request. Ownership goes with each client: one
 * handed in by the user (`new TaskClient`, `reconnect(client)`) stays the user's.
 */
import type { TaskEngine } from '../../engine/engine.js';
import { sleep } from '../../engine/retry.js';
import type { InputCallbacks, RetryPolicy, TaskClientEvents } from '../../api/index.js';
import { backoffDelay } from '../../engine/timing.js';
import { claimMade } from './connect.js';
import { listenOn, type ListenParts } from './listen.js';
import type { SafeEmitter } from '../events/emitter.js';
import { TaskError, TaskOptionError } from '../../errors.js';
import { openPort, unusable } from '../../port/open.js';
import { checkInputCapabilities } from '../input/capabilities.js';
import type { McpClient } from '../../types.js';
import { resolveWire } from '../../wire/resolve.js';
import type { TaskWire } from '../../wire/wire.js';

/** A call waiting for the reconnection: it may give up (abort, deadline, close) while it waits. */
export interface Waiter {
  /** True once the call stopped waiting. */
  abandoned(): boolean;
}

/** The parts of its TaskClient that the connection uses (see facade/parts.ts). */
export interface ConnectionParts extends ListenParts {
  /** Paused while the connection is lost; moved to the new wire on a reconnection. */
  readonly engine: TaskEngine;
  /** Set once `close()` began. */
  readonly closing: Promise<void> | undefined;
  /** The `connectionLost` and `connectionRestored` events. */
  readonly emitter: SafeEmitter<TaskClientEvents>;
  /** The `reconnect` factory, the backoff between its attempts, and the client-level callbacks. */
  readonly config: {
    readonly reconnect: (() => Promise<McpClient>) | undefined;
    readonly retry: RetryPolicy;
    readonly random: () => number;
    readonly callbacks: InputCallbacks;
  };
  report(error: TaskError): void;
}

/** The current SDK client and wire, and the switch to a new one. */
export class Connection {
  private detach: () => void = () => {};
  /**
   * What is still listened to on replaced clients that were connected when they were replaced, by
   * their wire: requests still open there may bring a task's questions (the TS SDK delivers them
   * on a task's blocking `tasks/result`), which are served until that connection closes.
   */
  private readonly draining = new Map<TaskWire, () => void>();
  private reconnecting: Promise<void> | undefined = undefined;
  /** Calls waiting in {@link Connection.ready}; one that gave up no longer keeps the factory going. */
  private readonly waiters = new Set<Waiter>();
  /** Set by {@link Connection.shutdown}: every wait for a reconnection rejects with it. */
  private shutdownError: Error | undefined = undefined;
  private readonly shutdownWaiters = new Set<(error: Error) => void>();
  /**
   * The SDK clients the library made and has not closed yet: the current one, if the library made
   * it, and one it made that a `reconnect` replaced while its connection was still open (requests
   * still open there stay there; {@link Connection.closeClient} closes it).
   */
  private readonly owned = new Set<McpClient>();
  /** Closes of replaced clients still under way ({@link Connection.closeClient} waits for them). */
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    private client: McpClient,
    private readonly parts: ConnectionParts,
  ) {
    if (claimMade(client)) this.owned.add(client);
  }

  /** True once the client's `close()` began. */
  private isClosed(): boolean {
    return this.parts.closing !== undefined;
  }

  /** The SDK client in use. */
  get current(): McpClient {
    return this.client;
  }

  /** Starts listening on `wire` (the engine's current one). */
  attach(wire: TaskWire): void {
    this.detach = listenOn(this.parts, wire);
  }

  /** The wire's transport closed. */
  closed(wire: TaskWire): void {
    const engine = this.parts.engine;
    const draining = this.draining.get(wire);
    if (draining !== undefined) {
      this.draining.delete(wire);
      draining();
    }
    if (this.isClosed() || wire !== engine.wire) return;
    engine.pause();
    this.parts.emitter.emit('connectionLost');
    void this.autoReconnect().catch(() => {});
  }

  /**
   * With a `reconnect` factory: make a new client until one connects. It tries at least once, and
   * goes on with backoff while tasks are tracked or calls wait for it ({@link Connection.ready}).
   */
  private autoReconnect(): Promise<void> {
    this.reconnecting ??= this.reconnectLoop().finally(() => {
      this.reconnecting = undefined;
    });
    return this.reconnecting;
  }

  private async reconnectLoop(): Promise<void> {
    const factory = this.parts.config.reconnect;
    const engine = this.parts.engine;
    if (factory === undefined) return;
    for (let attempt = 1; !this.isClosed() && engine.paused; attempt += 1) {
      if (attempt > 1 && engine.size === 0 && !this.anyWaiting()) return;
      try {
        const client = await factory();
        // Closed meanwhile, or reconnected by hand: this client is not needed.
        if (this.isClosed() || !engine.paused) {
          await client.close();
          return;
        }
        // A client the factory made at the library's request is the library's to close: when a
        // later one replaces it, or at close() (only the library knows when it is no longer used).
        this.owned.add(client);
        try {
          this.replace(client);
        } catch (error) {
          this.owned.delete(client);
          this.retire(client);
          throw error;
        }
        return;
      } catch (error) {
        this.parts.report(new TaskError(`Reconnecting failed (attempt ${attempt})`, { cause: error }));
        await sleep(
          engine.scheduler,
          backoffDelay(attempt, this.parts.config.retry, this.parts.config.random),
          engine.lifeSignal,
        ).catch(() => {});
      }
    }
  }

  /**
   * `undefined` while connected; while the connection is lost and a `reconnect` factory is set,
   * a promise that waits for it to reconnect (a call then goes out over the new connection), and
   * after shutdown a rejected one.
   */
  ready(waiter: Waiter): Promise<void> | undefined {
    // The usual case, connected, costs no promise.
    return this.connected ? undefined : this.waitReady(waiter);
  }

  /** True when a call may be sent now: {@link Connection.ready} would not wait. */
  get connected(): boolean {
    return this.shutdownError === undefined && (!this.parts.engine.paused || this.parts.config.reconnect === undefined);
  }

  /** True while a waiting call still wants the connection back (it has not given up). */
  private anyWaiting(): boolean {
    for (const waiter of this.waiters) if (!waiter.abandoned()) return true;
    return false;
  }

  private async waitReady(waiter: Waiter): Promise<void> {
    const engine = this.parts.engine;
    if (this.shutdownError !== undefined) throw this.shutdownError;
    if (!engine.paused || this.parts.config.reconnect === undefined) return;
    this.waiters.add(waiter);
    let fail: ((error: Error) => void) | undefined;
    const shutdown = new Promise<never>((_, reject) => {
      fail = reject;
      this.shutdownWaiters.add(reject);
    });
    try {
      await Promise.race([this.autoReconnect(), shutdown]);
    } finally {
      if (fail !== undefined) this.shutdownWaiters.delete(fail);
      this.waiters.delete(waiter);
    }
  }

  /** The client is closing: every wait for a reconnection rejects with `error`, at once. */
  shutdown(error: Error): void {
    this.shutdownError ??= error;
    for (const fail of this.shutdownWaiters) fail(error);
    this.shutdownWaiters.clear();
  }

  /**
   * Switches to a new connected client: every unsettled task is read again over it. The old
   * client, if the library made it, is closed once the tasks moved, when its connection was lost
   * (nothing can be open on it); one still connected keeps the requests open on it until
   * {@link Connection.closeClient}. A client of the user's is never closed.
   * @throws TaskOptionError when `client` is not connected, speaks the other task wire while tasks
   *   are tracked, or cannot take the client-level input callbacks (it did not declare their
   *   capability, on 2025-11-25).
   */
  replace(client: McpClient): void {
    const problem = unusable(client);
    if (problem !== undefined) throw new TaskOptionError(problem, { option: 'client' });
    const wire: TaskWire = resolveWire(openPort(client));
    const engine = this.parts.engine;
    // A task id names a task on its wire only: the tasks tracked cannot move to the other one.
    if (wire.kind !== engine.wire.kind && engine.size > 0) {
      throw new TaskOptionError(
        `The new connection speaks the ${wire.kind} task wire, but the ${engine.size} task(s) tracked were created over ${engine.wire.kind}: connect with the same protocol version (the tasks stay on the old connection's wire until then)`,
        { option: 'client' },
      );
    }
    // The client-level callbacks were taken for the old connection: one that cannot take them (on
    // 2025-11-25, an SDK client that did not declare the capability, [E35] letting the extension
    // take any) is refused, as the constructor refuses it; they would never be asked there.
    try {
      checkInputCapabilities(wire, this.parts.config.callbacks);
    } catch (error) {
      throw new TaskOptionError((error as Error).message, { option: 'client', cause: error });
    }
    const old = this.client;
    const lost = engine.paused;
    // A connection still open goes on serving the questions of the requests still open on it.
    if (lost) this.detach();
    else this.draining.set(engine.wire, this.detach);
    this.client = client;
    this.detach = listenOn(this.parts, wire);
    // The tool list may differ on the new connection.
    this.parts.catalog.invalidate();
    if (!engine.paused) engine.pause();
    engine.reconnected(wire);
    this.parts.emitter.emit('connectionRestored');
    if (old !== client && lost && this.owned.delete(old)) this.retire(old);
  }

  /**
   * Closes `client`, a replaced client the library made, in the background: a failure does not
   * undo the reconnection, it is reported on `error` (unless the TaskClient is closed by then).
   */
  private retire(client: McpClient): void {
    const closing = closeOf(client)
      .catch((error: unknown) => {
        if (!this.isClosed())
          this.parts.report(new TaskError('Closing the replaced SDK client failed', { cause: error }));
      })
      .finally(() => this.retiring.delete(closing));
    this.retiring.add(closing);
  }

  /**
   * True while an SDK client the library made is open or closing: {@link Connection.closeClient}
   * then has something to close.
   */
  get ownsClient(): boolean {
    return this.owned.size > 0 || this.retiring.size > 0;
  }

  /**
   * Closes every SDK client the library made and has not closed yet (the current one only if the
   * library made it), after the closes of replaced ones under way.
   * @throws the first error a close threw.
   */
  async closeClient(): Promise<void> {
    await Promise.all(this.retiring);
    const clients = [...this.owned];
    this.owned.clear();
    const closes = await Promise.allSettled(clients.map(closeOf));
    for (const close of closes) if (close.status === 'rejected') throw close.reason;
  }

  /** Stops listening, on replaced clients too. */
  close(): void {
    this.detach();
    this.detach = () => {};
    for (const detach of this.draining.values()) detach();
    this.draining.clear();
  }
}

/** `client.close()`, with a synchronous throw turned into a rejection. */
function closeOf(client: McpClient): Promise<void> {
  return new Promise<void>((resolve) => resolve(client.close()));
}
