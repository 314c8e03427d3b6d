/**
 * One request the library sends, as the MCP conventions trace it: a CLIENT span named by its
 * method (`tasks/get`, `tasks/list`, …) under a given parent, the trace context written into its
 * `_meta`, its error attributes when it fails, and its `mcp.client.operation.duration` point.
 * Shared by a call's `tasks/*` requests (call-requests.ts) and a listing's `tasks/list`
 * (listing.ts).
 */
import {
  SpanKind,
  SpanStatusCode,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
} from '@opentelemetry/api';
import type {
  NotificationInstrument,
  OutgoingNotification,
  OutgoingRequest,
  RequestFailure,
  RequestInstrument,
  RequestResult,
} from '../index.js';
import { connectionAttributes, metricAttributesOf, requestErrorType, scrubbed } from './attributes.js';
import type { TraceKit } from './kit.js';
import { ATTR, EVENT, METRIC } from './names.js';
import { attempt, startSpan } from './safe.js';

/**
 * The trace context of `within` as `_meta` entries (none when propagation is off, nothing is
 * written, or the propagator throws: the request goes without, and its span still ends).
 */
export function injected(kit: TraceKit, within: Context): Record<string, string> | undefined {
  const propagator = kit.propagator;
  if (propagator === undefined) return undefined;
  const carrier: Record<string, string> = {};
  const written = attempt('propagator.inject()', () => {
    propagator.inject(within, carrier, defaultTextMapSetter);
    return true;
  });
  return written === undefined || Object.keys(carrier).length === 0 ? undefined : carrier;
}

/**
 * The `error.type` of a request answered with a result that is a tool error. The MCP conventions
 * (common.yaml, `error.type` note, lines 38-43 of the reviewed copy): "When CallToolResult is
 * returned with `isError` set to `true`, this attribute SHOULD be set to `tool_error`"; metrics.yaml
 * (lines 28-39) gives `mcp.client.operation.duration` the same attribute group.
 */
export const TOOL_ERROR = 'tool_error';

/** True when a request answered with a result is a tool error (`isError`). */
export function isToolError(failure: RequestFailure | undefined, result: RequestResult | undefined): boolean {
  return failure === undefined && result?.toolError === true;
}

/**
 * Records a request's `mcp.client.operation.duration` (not for one the library stopped waiting
 * for): `attributes` are the connection's (and tool's) metric attributes.
 */
export function measureRequest(
  kit: TraceKit,
  attributes: Attributes,
  method: string,
  sentAt: number,
  failure: RequestFailure | undefined,
  result?: RequestResult,
): void {
  if (failure?.kind === 'aborted') return;
  const point: Attributes = { ...attributes, [ATTR.method]: method };
  if (method === 'tools/call') point[ATTR.operation] = 'execute_tool';
  if (failure !== undefined) {
    const type = requestErrorType(failure);
    if (type !== undefined) point[ATTR.errorType] = type;
    if (failure.kind === 'server') point[ATTR.statusCode] = String(failure.code);
  } else if (isToolError(failure, result)) point[ATTR.errorType] = TOOL_ERROR;
  const seconds = (performance.now() - sentAt) / 1000;
  attempt(METRIC.operationDuration, () => kit.instruments.request(seconds, point));
}

/**
 * The attributes of `request`'s span: those of the connection it goes over (after a reconnection,
 * the new one, not its call's), and `extra` (its tool).
 */
export function requestAttributes(kit: TraceKit, request: OutgoingRequest, extra: Attributes): Attributes {
  return { ...connectionAttributes(request.connection, kit.options.server), ...extra };
}

/** More of a request's span: its name, and attributes of the span only (not of its metric point). */
export interface RequestSpanOptions {
  /** The span's name; its method by default (`tools/call {tool}` for a `tools/call`). */
  readonly name?: string | undefined;
  /** Attributes of the span alone (the opt-in arguments of a `tools/call`). */
  readonly spanAttributes?: Attributes | undefined;
  /**
   * Runs once the span has ended: at the request's end, or after the notification about it (its
   * cancel) was written, whichever is last (what holds its parent open lets go then).
   */
  readonly onEnded?: (() => void) | undefined;
  /**
   * The id of the task the request is about, when known: replaced by its fingerprint in the
   * span's status description (a server's error message, "Task not found: <id>", say) unless
   * `recordTaskIds`.
   */
  readonly taskId?: (() => string | undefined) | undefined;
}

/** A request's span instrument, which its call may also end early (see {@link requestSpan}). */
export interface SpanRequest extends RequestInstrument {
  /**
   * Ends the span now, marked abandoned (`mcp.request.abandoned`), while the request goes on (its
   * call ended first); its end, later, only records its metric point. Returns whether the span has
   * ended: not while the notification about the request (its cancel) is still being written; the
   * span ends once that write is done or failed, and `onEnded` runs then.
   */
  readonly cut: () => boolean;
}

/**
 * A request as a span of its own: `{method}`, kind CLIENT, a child of `parent` (or, `detached`, a
 * root span linked to another), with the attributes of the connection it goes over and `extra`
 * (its tool) besides its method and id; the trace context of that span goes into its `_meta`, and
 * its end records the metric point.
 */
export function requestSpan(
  kit: TraceKit,
  parent: Context,
  request: OutgoingRequest,
  extra: Attributes,
  detached?: { readonly link: SpanContext },
  more: RequestSpanOptions = {},
): SpanRequest {
  const { method, id } = request;
  const sentAt = performance.now();
  const attributes = requestAttributes(kit, request, extra);
  const metricAttributes = metricAttributesOf(attributes);
  const options: SpanOptions = {
    kind: SpanKind.CLIENT,
    attributes: { [ATTR.method]: method, [ATTR.requestId]: id, ...attributes, ...more.spanAttributes },
  };
  // `detached`: a root span (the span in `parent` is not its parent), linked to `link`; `parent`
  // still gives what else the request carries (its baggage).
  if (detached !== undefined) {
    options.root = true;
    options.links = [{ context: detached.link }];
  }
  const span = startSpan(kit.tracer, more.name ?? method, options, parent);
  const within = trace.setSpan(parent, span);
  // Open until the request ends (or is cut); ended once its notification, if any, was written too.
  let open = true;
  let notifying = false;
  let ended = false;
  const endSpan = (): void => {
    if (open || notifying || ended) return;
    ended = true;
    attempt('span.end()', () => span.end());
    if (more.onEnded !== undefined) attempt('a request end', more.onEnded);
  };
  return {
    meta: injected(kit, within),
    end: (failure, result) => {
      // Each step on its own: a span processor or a meter that throws leaves the others done.
      if (open) {
        open = false;
        if (failure !== undefined)
          attempt('a request span', () => failRequestSpan(kit, span, failure, more.taskId?.()));
        else if (isToolError(failure, result)) attempt('a request span', () => toolErrorSpan(span));
        endSpan();
      }
      measureRequest(kit, metricAttributes, method, sentAt, failure, result);
    },
    // The request is given up, and the server told (its cancel): a span of that notification
    // under the request's, which waits for it.
    notification: (notification) => {
      if (!open) return undefined;
      notifying = true;
      return notificationSpan(
        kit,
        within,
        notification,
        extra,
        () => {
          notifying = false;
          endSpan();
        },
        more.taskId,
      );
    },
    cut: () => {
      if (open) {
        open = false;
        attempt('span.addEvent()', () => span.addEvent(EVENT.abandoned));
        endSpan();
      }
      return ended;
    },
  };
}

/**
 * A request span answered with a tool error: `error.type` `tool_error` (common.yaml lines 38-43),
 * and status ERROR, since `error.type` is set "if and only if the operation fails" (common.yaml
 * line 29) and the span status follows the Recording Errors document the span's note points to
 * (spans.yaml lines 37-39: an operation that ends with an error sets status ERROR). No
 * `rpc.response.status_code` (the JSON-RPC answer carries no error code) and no description: the
 * conventions' description is the JSON-RPC error message, which there is none of, and the tool's
 * own text may hold user data.
 */
function toolErrorSpan(span: Span): void {
  span.setAttribute(ATTR.errorType, TOOL_ERROR);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * A request span's error attributes and status. The status description is the server's message,
 * which may quote a task id (`taskId`): fingerprinted unless `recordTaskIds`.
 */
function failRequestSpan(kit: TraceKit, span: Span, failure: RequestFailure, taskId: string | undefined): void {
  const type = requestErrorType(failure);
  if (type === undefined) {
    span.addEvent(EVENT.abandoned);
    return;
  }
  span.setAttribute(ATTR.errorType, type);
  if (failure.kind === 'server') span.setAttribute(ATTR.statusCode, String(failure.code));
  const message = kit.options.recordTaskIds ? failure.message : scrubbed(failure.message, taskId);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * A notification the library sends about a request (`notifications/cancelled`), as the MCP
 * conventions trace it: a CLIENT span named by its method (their client span is reported "when it
 * initiates the request or notification"; no `jsonrpc.request.id`, which a notification has none
 * of), a child of `parent`, with the attributes of the connection it goes over and `extra` (its
 * tool); the trace context of that span goes into the notification's `params._meta` (their
 * context propagation: injected "when creating a request or notification"), and it ends, with its
 * `mcp.client.operation.duration` point, once written (a notification has no answer: its write is
 * as far as its sender sees). `ended` runs after the span ended; `taskId` is as
 * {@link RequestSpanOptions.taskId}.
 */
export function notificationSpan(
  kit: TraceKit,
  parent: Context,
  notification: OutgoingNotification,
  extra: Attributes,
  ended: () => void,
  taskId?: () => string | undefined,
): NotificationInstrument {
  const { method } = notification;
  const sentAt = performance.now();
  const attributes = { ...connectionAttributes(notification.connection, kit.options.server), ...extra };
  const metricAttributes = metricAttributesOf(attributes);
  const options: SpanOptions = { kind: SpanKind.CLIENT, attributes: { [ATTR.method]: method, ...attributes } };
  const span = startSpan(kit.tracer, method, options, parent);
  let done = false;
  return {
    meta: injected(kit, trace.setSpan(parent, span)),
    end: (failure) => {
      if (done) return;
      done = true;
      if (failure !== undefined) attempt('a notification span', () => failRequestSpan(kit, span, failure, taskId?.()));
      attempt('span.end()', () => span.end());
      measureRequest(kit, metricAttributes, method, sentAt, failure);
      ended();
    },
  };
}
