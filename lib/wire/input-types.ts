/**
 * The input side of the wire contract: the kinds of input a server asks for, the requests as a
 * wire hands them over (inline on the extension, side-channel on 2025-11-25), and what the client
 * answers for a call (what a request declares, [E35]). Re-exported by wire.ts.
 */
import type { JsonObject, SessionPort } from '../port/port.js';

/**
 * Which kinds of input the client answers for a call: those a callback of its own, or of the
 * client's, would be given.
 */
export interface InputAnswers {
  /**
   * The kinds answered, as bits: {@link ANSWERS_ELICITATION}, {@link ANSWERS_SAMPLING}. One call
   * per request sent (read when each is sent: a receiver may start serving meanwhile).
   */
  answered(): number;
}

/** {@link InputAnswers.answered}'s bit for elicitation. */
export const ANSWERS_ELICITATION = 1;
/** {@link InputAnswers.answered}'s bit for sampling. */
export const ANSWERS_SAMPLING = 2;

/** Kinds of input a server can ask for during a task. */
export type InputKind = 'elicitation' | 'sampling';

/** An input request that rides on a snapshot or a tool call reply (2026 extension, [E3], [E17]). */
export interface InlineInput {
  /** The key the answer goes back under; unique over the task's life ([E4]). */
  readonly key: string;
  /** The kind of request; `undefined` for a kind this library cannot answer (e.g. `roots/list`). */
  readonly kind: InputKind | undefined;
  /** The request's method as sent. */
  readonly method: string;
  /** The request's params as sent. */
  readonly params: JsonObject;
}

/** A side-channel input request from the server (2025-11-25), with the task it belongs to. */
export interface InputRequest {
  /** The request's JSON-RPC id, as the server sent it (for instrumentation). */
  readonly id?: string | number | undefined;
  /** The port the request came on (for instrumentation). */
  readonly port?: SessionPort | undefined;
  readonly kind: InputKind;
  /** The request's params as sent. */
  readonly params: Record<string, unknown>;
  /** The related task ([V7]); `undefined` for untagged requests (mcp-go, D14). */
  readonly taskId: string | undefined;
  /** Aborted when the server cancels the request or the connection closes. */
  readonly signal: AbortSignal;
  /**
   * True when the request's task belongs to another TaskClient on the same SDK client, which then
   * answers it. Read it again after waiting for the task (its `CreateTaskResult` may come later):
   * a handler that finds it true resolves `undefined`, passing the request on to that owner.
   */
  readonly ownedElsewhere?: (() => boolean) | undefined;
  /**
   * Records why an untagged request could not be tied to one call, for the error the server gets
   * when nobody answers it.
   */
  readonly unattributed?: ((note: UnattributedNote) => void) | undefined;
}

/** An input request for a task of the client's that nobody answered (see {@link TaskWire.serveInput}). */
export interface InputRefusal {
  readonly kind: InputKind;
  /** The request's method as sent. */
  readonly method: string;
  readonly taskId: string;
}

/** Why an untagged input request reached no call's own callback. */
export interface UnattributedNote {
  /** `no-task`: no call of the library was in flight; `ambiguous`: several were, and none alone could have asked. */
  readonly reason: 'no-task' | 'ambiguous';
  /** The library's calls in flight that could have asked. */
  readonly inFlight: number;
  /** Of these, tasks whose latest status was `input_required`. */
  readonly waitingForInput: number;
  /** Requests the host's own code sent through the SDK client that were still open. */
  readonly hostRequests: number;
}

/**
 * Answers an input request: a promise of the result to send back, or `undefined` (returned, or
 * resolved) to leave the request to whatever handled it before (the SDK client's own handler).
 * The result goes as it is: the handler checks its shape (the input router rejects a malformed
 * answer with -32603 naming the flaw, util/answer-shape.ts), and a rejection with an integer
 * `code` is sent back as that JSON-RPC error.
 */
export type InputHandler = (request: InputRequest) => Promise<Record<string, unknown> | undefined> | undefined;
