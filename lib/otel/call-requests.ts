/**
 * A call's requests, as its trace records them: each `tasks/*` request of the call's task as a
 * child span of the call's span (or, with `requests: 'events'`, an event on it), the call's own
 * `tools/call` folded into the call's span, and a request sent after that span ended as a span of
 * its own linked to it; the trace context each request carries in its `_meta`, and its metric
 * point. The call's trace is call.ts.
 */
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { OutgoingRequest, RequestFailure, RequestInstrument, RequestResult } from '../index.js';
import { metricAttributesOf, requestErrorType } from './attributes.js';
import type { TraceKit } from './kit.js';
import { TOOL_ERROR, injected, isToolError, measureRequest, requestAttributes, requestSpan } from './request.js';
import { ATTR, EVENT } from './names.js';
import { attempt } from './safe.js';

/** What a call's requests use of its trace (a `CallTrace`, call.ts). */
export interface RequestingCall {
  readonly kit: TraceKit;
  /** The span of the call and its task. */
  readonly span: Span;
  /** The caller's context with the call's span current: the parent of everything of the call. */
  readonly context: Context;
  /** Connection and tool attributes of the call's span, as the call began. */
  readonly attributes: Attributes;
  /** `gen_ai.tool.name`, when the tool is known: on every request of the call besides its connection's. */
  readonly toolAttributes: Attributes;
  /** The server's JSON-RPC error to the last `tools/call`, for the span's status description. */
  callError: RequestFailure | undefined;
  /** Holds the call's span open for a request; `undefined` once the call has settled. */
  hold(): (() => void) | undefined;
}

/** The entries of `attributes` that `base` does not have with the same value. */
function differing(attributes: Attributes, base: Attributes): Attributes {
  const different: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (base[key] !== value) different[key] = value;
  return different;
}

/** The instrument of `request`, one of `call`'s requests. */
export function callRequest(call: RequestingCall, request: OutgoingRequest): RequestInstrument {
  const { method, id } = request;
  const sentAt = performance.now();
  // The connection the request goes over, which after a reconnection is not the call's.
  const own = requestAttributes(call.kit, request, call.toolAttributes);
  const metricAttributes = metricAttributesOf(own);
  const measure = (failure: RequestFailure | undefined, result: RequestResult | undefined): void =>
    measureRequest(call.kit, metricAttributes, method, sentAt, failure, result);
  const release = call.hold();
  if (release === undefined) {
    // Sent after the call's span ended (the cancel of a task created after its call was given
    // up, say): a span of its own, a root, linked to the call's. Not a child of it: a span started under a parent that already ended shows as
    // outside it, and an event added to an ended span is dropped. The OpenTelemetry API lets a
    // span link to another that is no parent of it (a follows-from relation), and the MCP
    // conventions' CLIENT span per request stands as it is.
    return requestSpan(call.kit, call.context, request, call.toolAttributes, { link: call.span.spanContext() });
  }
  if (method === 'tools/call') {
    // The call's span itself, ended by the call's end: nothing to hold.
    release();
    // The call's span stands for its tools/call: the server's span becomes its child, and the
    // connection it went over is the span's (a call that waited for a reconnection goes out on
    // the new one).
    attempt('span.setAttributes()', () => call.span.setAttributes({ ...own, [ATTR.requestId]: id }));
    return {
      meta: injected(call.kit, call.context),
      // An `isError` answer: its metric point says `tool_error`; the call's span says it at the
      // call's end (the result rejects as a failed task, call-end.ts).
      end: (failure, result) => {
        if (failure?.kind === 'server') call.callError = failure;
        measure(failure, result);
      },
    };
  }
  if (call.kit.options.requests === 'events') {
    return {
      meta: injected(call.kit, call.context),
      end: (failure, result) => {
        // The span waited for this event (see CallTrace.hold(), call.ts). It names the connection
        // only where it is not the task span's (after a reconnection).
        const attributes: Attributes = {
          ...differing(own, call.attributes),
          [ATTR.method]: method,
          [ATTR.requestId]: id,
        };
        const type = failure === undefined ? undefined : requestErrorType(failure);
        if (type !== undefined) attributes[ATTR.errorType] = type;
        else if (isToolError(failure, result)) attributes[ATTR.errorType] = TOOL_ERROR;
        if (failure?.kind === 'aborted') attributes[EVENT.abandoned] = true;
        attempt('span.addEvent()', () => call.span.addEvent(EVENT.request, attributes));
        measure(failure, result);
        release();
      },
    };
  }
  const child = requestSpan(call.kit, call.context, request, call.toolAttributes);
  return {
    ...child,
    end: (failure, result) => {
      child.end(failure, result);
      release();
    },
  };
}
