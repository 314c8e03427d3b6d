/**
 * The inbound side of the raw dispatch: the taps on the server's requests and notifications, the
 * answers the taps give, and the inbound requests the server cancels.
 */
import type { InboundRequest, JsonObject, NotificationTap, RequestTap } from './port.js';
import { rpcError, rpcFieldsOf } from '../util/rpc-error.js';
import { clip, messageOf } from '../util/text.js';

/** What the inbound routing asks of its session. */
export interface InboundHost {
  /** Whether the connection is closed. */
  readonly closed: boolean;
  /** Whether the SDK client has a handler of its own for `method`. */
  hasOwnHandler(method: string): boolean;
  /** Writes one message on the transport, with a synchronous throw of the transport as a rejection. */
  trySend(message: JsonObject): Promise<void>;
  /** Hands a request straight to the SDK's handler behind the wrapper. */
  passOn(id: string | number, method: string, params: JsonObject): void;
  /**
   * The server cancelled request `requestId` (saying `reason`): true when it is one of the
   * library's own, which then fails (it will get no answer).
   */
  cancelledByServer(requestId: unknown, reason: string): boolean;
}

/** The taps of a session port and the inbound requests they are answering. */
export class InboundRouter {
  private readonly requestTaps = new Map<string, RequestTap[]>();
  private readonly missing = new Map<string, (params: JsonObject) => Error>();
  private readonly notificationTaps = new Map<string, NotificationTap[]>();
  /** Inbound requests this port is answering, by JSON-RPC id: aborted when the server cancels them. */
  private readonly answering = new Map<string | number, AbortController>();

  constructor(private readonly host: InboundHost) {}

  onRequest(method: string, tap: RequestTap, missing?: (params: JsonObject) => Error): () => void {
    if (missing !== undefined) this.missing.set(method, missing);
    return addTap(this.requestTaps, method, tap);
  }

  onNotification(method: string, tap: NotificationTap): () => void {
    return addTap(this.notificationTaps, method, tap);
  }

  notification(method: string, params: JsonObject): boolean {
    if (method === 'notifications/cancelled') {
      const requestId = params.requestId;
      const reason =
        typeof params.reason === 'string' ? clip(params.reason, MAX_REASON_LENGTH) : 'The server cancelled the request';
      const controller =
        typeof requestId === 'string' || typeof requestId === 'number' ? this.answering.get(requestId) : undefined;
      if (controller !== undefined) {
        controller.abort(new Error(reason));
        return true;
      }
      // [E30]: a server that will not answer a request of ours (it ends a `subscriptions/listen`
      // stream) names it in a cancellation of its own.
      if (this.host.cancelledByServer(requestId, reason)) return true;
    }
    // Every tap sees the notification (several TaskClients may share this port); it reaches the
    // SDK unless one of them consumed it.
    let consumed = false;
    for (const tap of this.notificationTaps.get(method) ?? []) {
      if (tap(params) === true) consumed = true;
    }
    return consumed;
  }

  inbound(id: string | number, method: string, params: JsonObject): boolean {
    // The base protocol forbids a requestor to reuse a request id within a session. A request, of
    // any method, whose id is that of one still being answered here is refused at once with -32600
    // and reaches no tap; the request holding the id is left untouched, so the server's
    // cancellation of that id and the close still reach its callback. Running both (as the SDKs'
    // `_onrequest` do, their map keeping only the later one) would ask the user twice and send two
    // answers the server can only match by id, one question's answer maybe to the other's waiter.
    // Once the first is settled the id is free again, as in the SDKs. Only the requests answered
    // here hold an id: one the SDK answers (its own handler, or passed on when every tap passed)
    // is not seen, so a reuse of its id is not caught.
    if (this.answering.has(id)) {
      const error = { code: -32600, message: 'Request id already in use by a request this client is still answering' };
      this.host.trySend({ jsonrpc: '2.0', id, error }).catch(() => {});
      return true;
    }
    const taps = this.requestTaps.get(method);
    if (taps === undefined || taps.length === 0) return false;
    const request = new Inbound(id, method, params);
    for (const tap of taps) {
      const answer = tap(request);
      if (answer === undefined) continue;
      this.answering.set(id, request.controller);
      this.answer(id, request, answer, taps.slice(taps.indexOf(tap) + 1));
      return true;
    }
    const refusal = this.refusal(method, params);
    if (refusal === undefined) {
      // The SDK takes it: nothing of ours is sent.
      request.replied(false);
      return false;
    }
    this.answering.set(id, request.controller);
    this.answer(id, request, Promise.reject(refusal), []);
    return true;
  }

  /** The connection closed: every inbound request still being answered is aborted. */
  shutDown(): void {
    for (const controller of this.answering.values()) controller.abort(new Error('Connection closed'));
    this.answering.clear();
  }

  /** Forgets the answered request `id`, unless the id now stands for another one. */
  private release(id: string | number, controller: AbortController): void {
    if (this.answering.get(id) === controller) this.answering.delete(id);
  }

  /** The error for a request no tap answered and the SDK has no handler for, if one was given. */
  private refusal(method: string, params: JsonObject): Error | undefined {
    const missing = this.missing.get(method);
    return missing === undefined || this.host.hasOwnHandler(method) ? undefined : missing(params);
  }

  /** Sends the answer of a tap (or of a later tap, or of the SDK's own handler when all pass). */
  private answer(
    id: string | number,
    request: Inbound,
    first: Promise<JsonObject | undefined>,
    rest: RequestTap[],
  ): void {
    // `settle` never rejects: every failure is an answer, or none.
    void this.settle(id, request, first, rest).then((sent) => request.replied(sent));
  }

  /** Answers the request; resolves to true once the transport took the tap's answer. */
  private async settle(
    id: string | number,
    request: Inbound,
    first: Promise<JsonObject | undefined>,
    rest: RequestTap[],
  ): Promise<boolean> {
    const { method, params, controller } = request;
    let reply: JsonObject;
    try {
      let result = await first;
      for (const tap of rest) {
        if (result !== undefined) break;
        result = await tap(request);
      }
      if (result === undefined) {
        // A request the server cancelled meanwhile (its notifications/cancelled stopped here, the
        // SDK never saw it) gets no answer, neither the SDK's nor a refusal (whose maker may tell
        // others of it); nor one after the close.
        if (controller.signal.aborted || this.host.closed) {
          this.release(id, controller);
          return false;
        }
        const refusal = this.refusal(method, params);
        if (refusal !== undefined) throw refusal;
        this.release(id, controller);
        // Every tap passed: the SDK answers, with the user's handler or its own -32601.
        this.host.passOn(id, method, params);
        return false;
      }
      reply = { jsonrpc: '2.0', id, result };
    } catch (error) {
      reply = { jsonrpc: '2.0', id, error: rpcErrorOf(error) };
    }
    this.release(id, controller);
    // A request the server cancelled gets no answer.
    if (controller.signal.aborted || this.host.closed) return false;
    return this.reply(id, method, reply);
  }

  /**
   * Sends the reply to an inbound request. When that fails (a result that cannot be serialized,
   * such as a bigint or a cycle, or any transport error), the request is answered once more with
   * a plain -32603 that says why: the peer is never left waiting for an answer that will not come
   * (a receiver's `tasks/result`, [V15]; a plain input request). A second failure is dropped.
   * Resolves to whether the transport took `reply` itself.
   */
  private reply(id: string | number, method: string, reply: JsonObject): Promise<boolean> {
    return this.host.trySend(reply).then(
      () => true,
      (error: unknown) => {
        if (this.host.closed) return false;
        const message = `The reply to ${method} could not be sent: ${messageOf(error)}`;
        this.host.trySend({ jsonrpc: '2.0', id, error: { code: -32603, message } }).catch(() => {});
        return false;
      },
    );
  }
}

/** One inbound request as its taps see it, with the work to start once it is answered. */
class Inbound implements InboundRequest {
  readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  /** The hooks to run once the answer is settled. */
  private readonly after: Array<(sent: boolean) => void> = [];
  /** Whether the answer was sent, once that is known. */
  private sent: boolean | undefined = undefined;

  constructor(
    readonly id: string | number,
    readonly method: string,
    readonly params: JsonObject,
  ) {}

  afterReply(run: (sent: boolean) => void): void {
    const sent = this.sent;
    if (sent === undefined) this.after.push(run);
    else queueMicrotask(() => run(sent));
  }

  /**
   * The transport took the answer (`sent`), or none of the taps' was sent: each `afterReply` runs
   * now, in the microtask that learnt it. A hook that throws stops no other.
   */
  replied(sent: boolean): void {
    this.sent = sent;
    for (const run of this.after.splice(0)) {
      try {
        run(sent);
      } catch {
        // A hook must not throw; if it does, the others run all the same.
      }
    }
  }
}

/**
 * The JSON-RPC error a tap's rejection is answered with: its integer `code` and `data` (a
 * DOMException's `code` is none: -32603 then), its `message`. Reading the value never throws out
 * of here (getters, proxies); `data` that cannot be serialized makes the send fail, and
 * {@link InboundRouter.reply} answers -32603.
 */
function rpcErrorOf(error: unknown): JsonObject {
  const { code = -32603, data } = rpcFieldsOf(error);
  return rpcError(code, messageOf(error), data);
}

function addTap<T>(map: Map<string, T[]>, method: string, tap: T): () => void {
  map.set(method, [...(map.get(method) ?? []), tap]);
  return () => {
    const rest = (map.get(method) ?? []).filter((t) => t !== tap);
    if (rest.length > 0) map.set(method, rest);
    else map.delete(method);
  };
}

/** Longest part of a server's cancellation reason that is kept. */
const MAX_REASON_LENGTH = 1_024;
