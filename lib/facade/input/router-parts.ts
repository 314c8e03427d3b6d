/**
 * What the input router (router.ts) is given and works with: the parts of its TaskClient it uses,
 * what it needs to know of a tracked task's owner, and what one callback run is about.
 */
import type { ClientInstrument, InputCallbacks, InputDelivery, TaskClientEvents, TaskHandle } from '../../api/index.js';
import type { EarlyInput } from './early.js';
import type { TaskError } from '../../errors.js';
import type { SafeEmitter } from '../events/emitter.js';
import type { SessionPort } from '../../port/port.js';
import type { UntaggedInput } from './untagged.js';

/** What the router needs to know about a tracked task. */
export interface InputOwner {
  readonly handle: TaskHandle;
  readonly callbacks: InputCallbacks | undefined;
  /**
   * Aborted when a stop or a cancel of the task begins, or when it settles (not on `detach()`):
   * while it is aborted, the task's questions reach no callback.
   */
  readonly signal: AbortSignal;
}

/** The parts of its TaskClient that the router uses (see facade/parts.ts). */
export interface RouterParts {
  /** The client's `onElicitation` / `onSampling`: tried after the call's own. */
  readonly config: { readonly callbacks: InputCallbacks };
  readonly live: {
    /** The owner of a tracked task, if this client tracks it (or detached it). */
    inputOwner(taskId: string): InputOwner | undefined;
    /** True for a task this client stopped tracking (not by `detach()`): its questions are refused. */
    ended(taskId: string): boolean;
    /** A request tagged with the tracked task `taskId` came: that task's server tags its questions. */
    markTagged(taskId: string): void;
  };
  /** Where a request that overtook its task's creation waits (input/early.ts). */
  readonly earlyInput: EarlyInput;
  /** Attributes requests that name no task to a call in flight (see untagged.ts). */
  readonly untagged: UntaggedInput;
  /** The `inputUnattributed` event: an untagged request could not be tied to a call. */
  readonly emitter: SafeEmitter<TaskClientEvents>;
  /** Aborted once the client's `close()` began: its callbacks answer nothing more, requests pass on. */
  readonly closeSignal: AbortController;
  /** The session port of the current connection: its receiver may claim a request, or refuse it. */
  readonly port: SessionPort;
  /** What watches the input handed to callbacks (`instrumentation`), if anything does. */
  readonly instrument: ClientInstrument | undefined;
  report(error: TaskError): void;
}

/** What one callback run is about: the task or call it belongs to, and how it came. */
export interface Asking {
  readonly taskId: string | undefined;
  readonly owner: InputOwner | undefined;
  /** The call being made (`retry`, `task-update`, or an untagged request of a call not answered yet). */
  readonly call?: { readonly toolName: string; readonly callbacks: InputCallbacks | undefined } | undefined;
  readonly delivery: InputDelivery;
  /** The request's own signal (the server cancelled it, the connection closed). */
  readonly signal: AbortSignal;
  /** Fires when the call it belongs to is given up (when there is no owner to say so). */
  readonly stop?: AbortSignal | undefined;
  /** The request named no task; the library tied it to this one. */
  readonly inferred?: boolean | undefined;
  /** The request's key in the `inputRequests` that carried it (`task-update`, `retry`). */
  readonly key?: string | undefined;
  /** The JSON-RPC id of the server's request (a side-channel request only), for instrumentation. */
  readonly id?: string | number | undefined;
  /** The port the request came on; the current one when not told. */
  readonly port?: SessionPort | undefined;
}
