/**
 * Serving receiver tasks for one TaskClient (`TaskClient.serve` and the `serve` option): checks
 * that the connection can be served, starts the {@link Receiver} on it, moves the receiver to the
 * next connection after a reconnect, lets its callbacks answer plain input requests too, and
 * closes it when the client closes.
 */
import type { InputCallbacks, ReceiverHandle, ServeOptions, TaskClientEvents } from '../../api/index.js';
import type { Scheduler } from '../../util/scheduler.js';
import { TaskOptionError } from '../../errors.js';
import type { SafeEmitter } from '../events/emitter.js';
import type { InputRouter } from './router.js';
import { resolveServeOptions } from '../options.js';
import type { LiveTasks } from '../handle/registry.js';
import type { SessionPort } from '../../port/port.js';
import { Receiver, cannotServe } from '../../receiver/receiver.js';
import type { ReceiverConfig } from '../../receiver/types.js';

/** The parts of its TaskClient that serving uses (see facade/parts.ts). */
export interface ServingParts {
  readonly emitter: SafeEmitter<TaskClientEvents>;
  /** The live tasks: a receiver task is related to the client's task it was sent for. */
  readonly live: LiveTasks;
  /** Its fallback becomes the receiver's callbacks while the receiver serves. */
  readonly router: InputRouter;
  /** The engine's scheduler: the receiver's timers. */
  readonly engine: { readonly scheduler: Scheduler };
  /** The client's `onElicitation` / `onSampling`: what serves when `serve` names no callback. */
  readonly config: { readonly callbacks: InputCallbacks };
  now(): number;
  /** The session port of the current connection. */
  readonly port: SessionPort;
}

/**
 * The receiver configuration of the `serve` option, `undefined` without it.
 * @throws TaskOptionError for invalid options, or when no callback would serve anything.
 */
export function serveOption(serve: ServeOptions | undefined, callbacks: InputCallbacks): ReceiverConfig | undefined {
  return serve === undefined ? undefined : resolveServeOptions(serve, callbacks);
}

/**
 * Throws why `port` cannot be served with `config` (nothing to check without a `config`).
 * @throws TaskNotSupportedError when the SDK Client did not declare a needed capability.
 * @throws TaskOptionError when receiver tasks are already served on this connection.
 */
export function assertServable(port: SessionPort, config: ReceiverConfig | undefined): void {
  const refusal = config === undefined ? undefined : cannotServe(port, config);
  if (refusal !== undefined) throw refusal;
}

/** The receiver of one TaskClient, once started. */
export class Serving {
  private receiving: Receiver | undefined;

  constructor(private readonly parts: ServingParts) {}

  /** The receiver while it serves. */
  get receiver(): ReceiverHandle | undefined {
    return this.receiving === undefined || this.receiving.closed ? undefined : this.receiving;
  }

  /**
   * Validates `options` and starts serving the current connection (see `TaskClient.serve`).
   * @throws TaskOptionError when a receiver already serves, for invalid options, or when no
   *   callback would serve anything.
   * @throws TaskNotSupportedError when the SDK Client did not declare a needed capability.
   */
  serve(options: ServeOptions): ReceiverHandle {
    if (this.receiving !== undefined && !this.receiving.closed) {
      throw new TaskOptionError('This TaskClient already serves receiver tasks: close its receiver first', {
        option: 'serve',
      });
    }
    const config = resolveServeOptions(options, this.parts.config.callbacks);
    assertServable(this.parts.port, config);
    return this.start(config);
  }

  /** Starts serving the current connection with a checked `config` ({@link assertServable}). */
  start(config: ReceiverConfig): Receiver {
    const { emitter, live, router } = this.parts;
    const receiver = new Receiver(
      config,
      {
        emit: (event, ...args) => emitter.emit(event, ...args),
        listening: (event) => emitter.has(event),
        relate: (taskId) => {
          const handle = taskId === undefined ? undefined : live.inputOwner(taskId)?.handle;
          return { handle, toolName: handle?.toolName };
        },
        callback: (kind, taskId) => router.callbackFor(kind, taskId),
        report: (error) => emitter.emit('error', error, undefined),
      },
      this.parts.engine.scheduler,
      () => this.parts.now(),
    );
    receiver.attach(this.parts.port);
    this.receiving = receiver;
    const callbacks = { onElicitation: config.elicitation, onSampling: config.sampling };
    router.setFallback(() => (receiver.closed ? undefined : callbacks));
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
