/**
 * A probed session's request and what it gives back: the options of a request, its reply as
 * received (with when it went out and came back), whether the server itself answered, a blocking
 * `tasks/result` held open, a failed request as a reply, and what a request or a wait throws once
 * the probe stopped. The
 * session that sends them is session.ts.
 */
import { PortError, type JsonObject } from '../port/port.js';
import { TASKS_EXTENSION } from '../wire/resolve.js';

/** The per-request declaration of the extension ([E1]). */
export const DECLARE: JsonObject = { extensions: { [TASKS_EXTENSION]: {} } };

/** A reply's result as it came (the doctor judges what the server sent, not what a decoder makes of it). */
export const identity = (value: unknown): JsonObject => value as JsonObject;

/**
 * When a request went out and its reply came back: `at` and `sentAt` on the session's clock,
 * `seq` and `sentSeq` in the session's own order of sends and replies (one counter, so that two
 * events in the same millisecond still have an order: a request sent after a reply arrived has a
 * `sentSeq` above that reply's `seq`).
 */
export interface Timing {
  readonly at: number;
  readonly sentAt: number;
  readonly seq: number;
  readonly sentSeq: number;
}

/**
 * A reply, as received. `kind` of a failure is the port's: `server` for the server's own JSON-RPC
 * error; anything else (`timeout`, `closed`, `local`, ...) means the server said nothing.
 */
export type Reply =
  | ({ readonly ok: true; readonly result: JsonObject } & Timing)
  | ({
      readonly ok: false;
      readonly code: number;
      readonly message: string;
      readonly kind: string;
      /** The server's error `data`, if it sent any. */
      readonly data?: unknown;
    } & Timing);

/** True when the server itself answered: a result, or its own JSON-RPC error (not a local timeout or a closed connection). */
export function serverAnswered(reply: Reply): boolean {
  return reply.ok || reply.kind === 'server';
}

/**
 * True when the server refused a call as invalid: `-32602` (invalid params: a tool it does not
 * have, arguments it rejects) or `-32601` ([V3]: a task call of a tool without task support). A
 * server must answer a call it accepts with a task ([V14], [E2]); one it refuses breaks no rule of
 * the doctor's, and leaves nothing to check.
 */
export function refusedAsInvalid(reply: Reply): boolean {
  return !reply.ok && reply.kind === 'server' && (reply.code === -32602 || reply.code === -32601);
}

/** What a row says of a call {@link refusedAsInvalid}, after the reply in words. */
export const REFUSED = 'the server refused the call as invalid (check the tool and its arguments)';

/** A blocking `tasks/result` the doctor holds open. */
export interface OpenResult {
  readonly sentAt: number;
  readonly reply: Promise<Reply>;
  /** Set once answered. */
  answered: Reply | undefined;
}

/** Thrown when the probe's bound or the run's signal stops a wait. */
export class ProbeStopped extends Error {
  override name = 'ProbeStopped';
}

/** Options of `Session.call` (session.ts). */
export interface CallOptions {
  /** @defaultValue the request bound */
  readonly timeoutMs?: number | undefined;
  /** Declare the extension on this request. @defaultValue true on the extension wire */
  readonly declare?: boolean | undefined;
}

/**
 * A failed request as a {@link Reply} (the port's kind and code); a request the probe's stop
 * aborted throws {@link ProbeStopped} instead.
 */
export function failedReply(error: unknown, timing: () => Timing): Reply {
  if (error instanceof PortError && error.kind === 'aborted') throw new ProbeStopped('stopped', { cause: error });
  if (error instanceof PortError)
    return {
      ok: false,
      code: error.code,
      message: error.message,
      kind: error.kind,
      ...(error.kind === 'server' && error.data !== undefined ? { data: error.data } : {}),
      ...timing(),
    };
  return {
    ok: false,
    code: -32603,
    message: error instanceof Error ? error.message : String(error),
    kind: 'local',
    ...timing(),
  };
}
