/**
 * A call's requests, as its trace records them: each `tools/call` of the call as a child span of
 * the call's task span, `tools/call {tool}` (CLIENT, from sent to answered: for a task, the
 * CreateTaskResult), each `tasks/*` request of its task as a child span too (or, with
 * `requests: 'events'`, an event on it), and a request sent after that span ended as a span of its
 * own linked to it; the trace context each request carries in its `_meta`, and its metric point.
 * The call's trace is call.ts.
 */
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { OutgoingRequest, RequestFailure, RequestInstrument, RequestResult } from '../index.js';
import { metricAttributesOf, requestErrorType } from './attributes.js';
import type { TraceKit } from './kit.js';
import {
  TOOL_ERROR,
  injected,
  isToolError,
  measureRequest,
  notificationSpan,
  requestAttributes,
  requestSpan,
} from './request.js';
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
  /** The tool called; `undefined` for a task resumed by bare id. */
  readonly toolName: string | undefined;
  /** The call's arguments as JSON, with `recordArguments`. */
  readonly argumentsJson: string | undefined;
  /** The call's task, once known: its id is fingerprinted where a server's message quotes it. */
  readonly taskId: string | undefined;
  /** The server's JSON-RPC error to the last `tools/call`, for the span's status description. */
  callError: RequestFailure | undefined;
  /**
   * Holds the call's span open for a request; `undefined` once the call has settled. `cut` ends
   * what it holds early when the call ends first (`always`), and says whether it ended it.
   */
  hold(cut?: () => boolean, always?: boolean): (() => void) | undefined;
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
  // The call's task id, once known, is fingerprinted in the server's messages about the request.
  const taskId = (): string | undefined => call.taskId;
  // A tools/call still unanswered when its call ends (given up before its task was created) is
  // cut: its span ends with the call's (see CallTrace.hold()). One already answered whose cancel
  // is still being written is not ended by the cut: the call's span waits for that write.
  let cut: (() => boolean) | undefined;
  const release = method === 'tools/call' ? call.hold(() => cut?.() ?? true, true) : call.hold();
  if (release === undefined) {
    // Sent after the call's span ended (the cancel of a task created after its call was given
    // up, say): a span of its own, a root, linked to the call's. Not a child of it: a span started under a parent that already ended shows as
    // outside it, and an event added to an ended span is dropped. The OpenTelemetry API lets a
    // span link to another that is no parent of it (a follows-from relation), and the MCP
    // conventions' CLIENT span per request stands as it is.
    return requestSpan(
      call.kit,
      call.context,
      request,
      call.toolAttributes,
      { link: call.span.spanContext() },
      { taskId },
    );
  }
  if (method === 'tools/call') {
    // A span of its own under the task span, from sent to answered, whatever the requests mode:
    // the conventions' client span "covers the time to receive the response" (spans.yaml, the
    // `mcp.client` note), and for a task-augmented call that response is the CreateTaskResult; the
    // task's life is the task span's. Its context goes in the request's `_meta`, so the server's
    // span of the tools/call is its child. The task span takes the connection it went over (a call
    // that waited for a reconnection goes out on the new one), but not its id.
    attempt('span.setAttributes()', () => call.span.setAttributes(own));
    const name = call.toolName === undefined ? method : `${method} ${call.toolName}`;
    const spanAttributes = call.argumentsJson === undefined ? undefined : { [ATTR.arguments]: call.argumentsJson };
    const extra = { ...call.toolAttributes, [ATTR.operation]: 'execute_tool' };
    const child = requestSpan(call.kit, call.context, request, extra, undefined, {
      name,
      spanAttributes,
      onEnded: release,
      taskId,
    });
    cut = child.cut;
    return {
      meta: child.meta,
      notification: (notification) => child.notification?.(notification),
      end: (failure, result) => {
        if (failure?.kind === 'server') call.callError = failure;
        child.end(failure, result);
      },
    };
  }
  if (call.kit.options.requests === 'events') {
    // The span waits for the request's event, and for the notification about it (its cancel), if
    // any: a span of its own under the call's (the conventions' client span of a notification).
    let waiting = 1;
    const done = (): void => {
      if (--waiting === 0) release();
    };
    return {
      meta: injected(call.kit, call.context),
      notification: (notification) => {
        waiting++;
        return notificationSpan(call.kit, call.context, notification, call.toolAttributes, done, taskId);
      },
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
        done();
      },
    };
  }
  return requestSpan(call.kit, call.context, request, call.toolAttributes, undefined, {
    onEnded: release,
    taskId,
  });
}
