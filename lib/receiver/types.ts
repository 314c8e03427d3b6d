/**
 * The receiver role of MCP 2025-11-25 tasks: this client runs the server's task-augmented
 * `elicitation/create` and `sampling/createMessage` requests as tasks of its own, and serves
 * `tasks/get|result|list|cancel` for them. What the receiver modules share: the resolved
 * settings, what the receiver needs from the TaskClient that hosts it, and the request kinds.
 */
import type {
  ElicitationCallback,
  InputContext,
  SamplingCallback,
  TaskClientEvents,
  TaskHandle,
} from '../api/index.js';
import type { TaskError } from '../errors.js';
import type { JsonObject, SessionPort } from '../port/port.js';
import { rpcThrowable } from '../util/rpc-error.js';

/** The two requests a client can receive as tasks ([R1]: `tasks.requests` of a client). */
export type ReceiverKind = 'elicitation' | 'sampling';

/** The JSON-RPC method of each kind. */
export const METHOD_OF: Readonly<Record<ReceiverKind, string>> = {
  elicitation: 'elicitation/create',
  sampling: 'sampling/createMessage',
};

/** Settings of a receiver, validated and with defaults applied. */
export interface ReceiverConfig {
  readonly elicitation: ElicitationCallback | undefined;
  readonly sampling: SamplingCallback | undefined;
  /** Retention granted when the requestor asks for none (already capped by `maxTtlMs`). */
  readonly ttlMs: number;
  /** Longest retention granted ([V10]). */
  readonly maxTtlMs: number;
  /** `pollInterval` of every snapshot. */
  readonly pollIntervalMs: number;
  /** Most tasks held per connection. */
  readonly maxTasks: number;
  /** Most `tasks/result` requests waiting on one running task (§6). */
  readonly maxResultWaiters: number;
  /** Tasks per `tasks/list` page. */
  readonly pageSize: number;
}

/** A JSON-RPC error to answer with: the port sends `{ code, message }` back. */
export interface RpcFailure extends Error {
  readonly code: number;
}

/** Builds an {@link RpcFailure}. */
export const rpcFailure: (code: number, message: string) => RpcFailure = rpcThrowable;

/** JSON-RPC codes the receiver answers with ([V26]). */
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** A receiver session as the TaskClients on its connection see it. */
export interface ServedConnection {
  readonly closed: boolean;
  /** Whether it takes this request (a task-augmented one of a kind it serves). */
  claims(kind: ReceiverKind, params: JsonObject): boolean;
}

/**
 * Which receiver session serves each connection (one at most, whichever TaskClient on that SDK
 * client started it). Kept on the TaskClient's side of the seam (facade/input/serving.ts), whose
 * input routing leaves to that session the requests it claims.
 */
export interface ServingRegistry {
  /** The session last recorded for `port`, closed or not. */
  servedOn(port: SessionPort): ServedConnection | undefined;
  /** Records `session` as the one serving `port`. */
  serve(port: SessionPort, session: ServedConnection): void;
  /** Forgets `session` if it is still the one recorded for `port`. */
  leave(port: SessionPort, session: ServedConnection): void;
}

/** What a receiver needs from the TaskClient that hosts it. */
export interface ReceiverHost {
  /** Emits a lifecycle event on the client's emitter. */
  emit<K extends keyof TaskClientEvents>(event: K, ...args: TaskClientEvents[K]): void;
  /** True when someone listens to `event` (building a payload is skipped otherwise). */
  listening(event: keyof TaskClientEvents): boolean;
  /**
   * The call of the client that tracks the server's task `taskId`, if any: its handle, and a
   * signal aborted when the call ends (it settles; not when it is detached).
   */
  owner(taskId: string | undefined): { readonly handle: TaskHandle; readonly signal: AbortSignal } | undefined;
  /**
   * The callback that runs a receiver task of `kind` belonging to the server's task `taskId`, in
   * the client's routing order (the owning call's, the client's, then `serve()`'s).
   */
  callback(
    kind: ReceiverKind,
    taskId: string | undefined,
  ): ((params: never, context: InputContext) => unknown) | undefined;
  /** Reports a problem that failed nothing (on the client's `error` event). */
  report(error: TaskError): void;
  /**
   * While a task creation is under way on the connection and no call tracks the server's task
   * `taskId` yet (the request may overtake its `CreateTaskResult`, [V7]): a wait, bounded as for
   * the client's own input, for that task to be tracked, resolving with what to do then (`go`:
   * route as usual; `pass`: no call of this client owns it; `drop`: its call was given up and its
   * task is being cancelled). `undefined` when there is nothing to wait for.
   */
  whenTracked(taskId: string): Promise<'go' | 'pass' | 'drop'> | undefined;
}
