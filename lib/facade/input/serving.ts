/**
 * Serving receiver tasks for one TaskClient (`TaskClient.serve` and the `serve` option): checks
 * the receiver it is given (made by `mcp-task-client/receiver`, through the seam in
 * receiver-seam.ts), starts it on the current connection, moves it to the next connection after a
 * reconnect, lets its callbacks answer plain input requests too, and closes it with the client.
 */
import type { InputCallbacks, ReceiverHandle, TaskClientEvents, TaskReceiver } from '../../api/index.js';
import type { Scheduler } from '../../util/scheduler.js';
import { TaskOptionError } from '../../errors.js';
import type { SafeEmitter } from '../events/emitter.js';
import type { InputRouter } from './router.js';
import type { LiveTasks } from '../handle/registry.js';
import type { SessionPort } from '../../port/port.js';
import { configureReceiver, type ConfiguredReceiver, type PluggedReceiver } from './receiver-seam.js';

/** The parts of its TaskClient that serving uses (see facade/parts.ts). */
export interface ServingParts {
  readonly emitter: SafeEmitter<TaskClientEvents>;
  /** The live tasks: a receiver task is related to the client's task it was sent for. */
  readonly live: LiveTasks;
  /** Its fallback becomes the receiver's callbacks while the receiver serves. */
  readonly router: InputRouter;
  /** The engine's scheduler: the receiver's timers. */
  readonly engine: { readonly scheduler: Scheduler };
  /** The client's `onElicitation` / `onSampling`: what serves when the receiver names no callback. */
  readonly config: { readonly callbacks: InputCallbacks };
  now(): number;
  /** The session port of the current connection. */
  readonly port: SessionPort;
}

/**
 * Throws why `port` cannot be served by `receiver` (nothing to check without one).
 * @throws TaskNotSupportedError when the SDK Client did not declare a needed capability.
 * @throws TaskOptionError when receiver tasks are already served on this connection.
 */
export function assertServable(port: SessionPort, receiver: ConfiguredReceiver | undefined): void {
  const refusal = receiver?.refusal(port);
  if (refusal !== undefined) throw refusal;
}

/** The receiver of one TaskClient, once started. */
export class Serving {
  private receiving: PluggedReceiver | undefined = undefined;

  constructor(private readonly parts: ServingParts) {}

  /** The receiver while it serves. */
  get receiver(): ReceiverHandle | undefined {
    return this.receiving === undefined || this.receiving.closed ? undefined : this.receiving;
  }

  /**
   * Starts serving the current connection with `receiver` (see `TaskClient.serve`).
   * @throws TaskOptionError when a receiver already serves, when `receiver` is not one
   *   `taskReceiver()` made, or when no callback would serve anything.
   * @throws TaskNotSupportedError when the SDK Client did not declare a needed capability.
   */
  serve(receiver: TaskReceiver): ReceiverHandle {
    if (this.receiving !== undefined && !this.receiving.closed) {
      throw new TaskOptionError('This TaskClient already serves receiver tasks: close its receiver first', {
        option: 'serve',
      });
    }
    const configured = configureReceiver(receiver, this.parts.config.callbacks);
    assertServable(this.parts.port, configured);
    return this.start(configured);
  }

  /** Starts serving the current connection with a checked receiver ({@link assertServable}). */
  start(configured: ConfiguredReceiver): ReceiverHandle {
    const { emitter, live, router } = this.parts;
    const receiver = configured.start(
      {
        emit: (event, ...args) => emitter.emit(event, ...args),
        listening: (event) => emitter.has(event),
        owner: (taskId) => (taskId === undefined ? undefined : live.inputOwner(taskId)),
        callback: (kind, taskId) => router.callbackFor(kind, taskId),
        whenTracked: (taskId) => router.untilTracked(taskId),
        report: (error) => emitter.emit('error', error, undefined),
        scheduler: this.parts.engine.scheduler,
        now: () => this.parts.now(),
      },
      this.parts.port,
    );
    this.receiving = receiver;
    router.setFallback(() => (receiver.closed ? undefined : configured.callbacks));
    return receiver;
  }

  /** Receiver tasks belong to their connection: a new one gets a fresh receiver session. */
  follow(port: SessionPort): void {
    this.receiving?.follow(port);
  }

  /** Stops serving (when the client closes). */
  close(): Promise<void> | undefined {
    return this.receiving?.close();
  }
}
