/**
 * The seam between a TaskClient and the receiver plug-in (`mcp-task-client/receiver`, lib/receiver.ts
 * over lib/receiver/): what a receiver gets from the client that serves it and what it gives back,
 * the plug-in behind each receiver `taskReceiver()` made, and which receiver serves each
 * connection (for every TaskClient of this library on it), so that input routing leaves the
 * receiver's requests to it and refuses the task requests nobody serves. The root entry point
 * holds this seam only: it never imports lib/receiver/.
 */
import type {
  InputCallbacks,
  InputContext,
  ReceiverHandle,
  TaskClientEvents,
  TaskHandle,
  TaskReceiver,
} from '../../api/index.js';
import type { Scheduler } from '../../util/scheduler.js';
import { TaskNotSupportedError, TaskOptionError, type TaskError } from '../../errors.js';
import type { JsonObject, SessionPort } from '../../port/port.js';
import { objectAt } from '../../util/json.js';
import type { InputKind } from '../../wire/wire.js';

/** A receiver session as the TaskClients on its connection see it. */
export interface ServedConnection {
  readonly closed: boolean;
  /** Whether it takes this request (a task-augmented one of a kind it serves). */
  claims(kind: InputKind, params: JsonObject): boolean;
}

/** What a started receiver does for the TaskClient that serves it. */
export interface PluggedReceiver extends ReceiverHandle {
  /** Serves `port`, the next connection after a reconnect (a problem is reported, not thrown). */
  follow(port: SessionPort): void;
}

/** What a receiver gets from the TaskClient that serves it. */
export interface ServingHost {
  /** Emits a lifecycle event on the client's emitter. */
  emit<K extends keyof TaskClientEvents>(event: K, ...args: TaskClientEvents[K]): void;
  /** True when someone listens to `event`. */
  listening(event: keyof TaskClientEvents): boolean;
  /**
   * The call of this client that tracks the server's task `taskId`, if any: its handle, and a
   * signal aborted when the call ends (it settles; not when it is detached), as its side-channel
   * questions are.
   */
  owner(taskId: string | undefined): { readonly handle: TaskHandle; readonly signal: AbortSignal } | undefined;
  /** The callback that answers `kind` for the server's task `taskId`, in the client's routing order. */
  callback(
    kind: InputKind,
    taskId: string | undefined,
  ): ((params: never, context: InputContext) => unknown) | undefined;
  /** Reports a problem on the client's `error` event. */
  report(error: TaskError): void;
  /**
   * While a creation is under way and no call tracks the server's task `taskId` yet, a bounded
   * wait for it, resolving with what to do then (`go`, `pass`, `drop`); `undefined` otherwise.
   */
  whenTracked(taskId: string): Promise<'go' | 'pass' | 'drop'> | undefined;
  /** The client's scheduler (the receiver's timers) and clock. */
  readonly scheduler: Scheduler;
  now(): number;
}

/** A receiver made ready for one TaskClient (see {@link ReceiverPlugin.configure}). */
export interface ConfiguredReceiver {
  /** `capabilities` with what serving needs added (`TaskClient.connect` declares it). */
  declare(capabilities: JsonObject): JsonObject;
  /** Why it cannot serve `port` (a capability the SDK client lacks, another receiver there). */
  refusal(port: SessionPort): TaskError | undefined;
  /** Starts serving `port`, checked with {@link ConfiguredReceiver.refusal}. */
  start(host: ServingHost, port: SessionPort): PluggedReceiver;
  /** Its callbacks, which answer plain requests too (tried after the call's and the client's). */
  readonly callbacks: InputCallbacks;
}

/** The plug-in side of a {@link TaskReceiver} (lib/receiver.ts makes it). */
export interface ReceiverPlugin {
  /**
   * The receiver for a client whose own callbacks are `callbacks` (they serve when the receiver
   * was given none).
   * @throws TaskOptionError when no callback would serve anything.
   */
  configure(callbacks: InputCallbacks): ConfiguredReceiver;
}

/** The plug-in behind each receiver `taskReceiver()` made. */
const PLUGINS = new WeakMap<object, ReceiverPlugin>();

/** Makes `receiver` a {@link TaskReceiver} served through `plugin`. */
export function plugIn(receiver: TaskReceiver, plugin: ReceiverPlugin): TaskReceiver {
  PLUGINS.set(receiver, plugin);
  return receiver;
}

/**
 * The receiver `value` configured for a client whose own callbacks are `callbacks`.
 * @throws TaskOptionError (`option: 'serve'`) when `value` was not made by `taskReceiver()`, or
 *   when no callback would serve anything.
 */
export function configureReceiver(value: unknown, callbacks: InputCallbacks): ConfiguredReceiver {
  const plugin = typeof value === 'object' && value !== null ? PLUGINS.get(value) : undefined;
  if (plugin === undefined) {
    throw new TaskOptionError(
      'Option "serve" must be a receiver made by taskReceiver(options) of \'mcp-task-client/receiver\'',
      { option: 'serve' },
    );
  }
  return plugin.configure(callbacks);
}

/** The receiver session serving each connection. */
const SERVING = new WeakMap<SessionPort, ServedConnection>();

/** Which receiver serves each connection, for every TaskClient of this library on it. */
export const servingRegistry = {
  servedOn: (port: SessionPort): ServedConnection | undefined => SERVING.get(port),
  serve: (port: SessionPort, session: ServedConnection): void => void SERVING.set(port, session),
  leave: (port: SessionPort, session: ServedConnection): void => {
    if (SERVING.get(port) === session) SERVING.delete(port);
  },
};

/**
 * Whether a receiver takes this request on `port` (a task-augmented request of a kind it serves):
 * the side-channel input path then leaves it alone.
 */
export function receiverClaims(port: SessionPort, kind: InputKind, params: JsonObject): boolean {
  return SERVING.get(port)?.claims(kind, params) ?? false;
}

/** The task augmentation of each kind a client declares, under `tasks.requests` ([R1]). */
const TASK_REQUEST: Readonly<Record<InputKind, string>> = { elicitation: 'create', sampling: 'createMessage' };

/**
 * Why a task-augmented request of `kind` is refused: the client declared task support for it (so
 * it may not answer plainly, [V14]; only an undeclared kind may, [V1]) but no receiver serves it
 * now (none started, or it was closed). `undefined` for any other request.
 */
export function unservedTaskRequest(port: SessionPort, kind: InputKind, params: JsonObject): TaskError | undefined {
  if (params.task === undefined || params.task === null || receiverClaims(port, kind, params)) return undefined;
  const declared = port.clientCapabilities();
  if (objectAt(declared, [kind]) === undefined) return undefined;
  if (objectAt(declared, ['tasks', 'requests', kind, TASK_REQUEST[kind]]) === undefined) return undefined;
  return new TaskNotSupportedError(
    `This client declared ${kind} tasks but no receiver serves them now, so it cannot answer this request as a task`,
    { feature: kind },
  );
}
