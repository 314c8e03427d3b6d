/**
 * The span of an input request the server sent (`elicitation/create`, `sampling/createMessage`):
 * kind SERVER, as the MCP conventions have it for an operation the server initiates. Its parent is
 * the trace context in the request's `_meta` when the server put one there (the server's own span),
 * linked to the span of the call it belongs to; without one, the call's span is its parent. Only
 * the server's span context is taken: the rest of the context (the caller's baggage) stays the
 * call's, and the server's baggage is not applied. A
 * question tied to no call this instrumentation traces is not parented to the context current
 * where the transport delivered it (a span of some unrelated caller, maybe): without the server's
 * context it is a root span, linked to that span, as the MCP conventions have a server span take
 * the context of `_meta` as its parent and link the ambient one. The call's span also gets an
 * event for the request and one for its answer.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  defaultTextMapGetter,
  trace,
  type Attributes,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import type { InputInstrument, InputOutcome, InstrumentedInput } from '../index.js';
import { connectionAttributes, isServerErrorCode, readError, scrubbed } from './attributes.js';
import type { CallTrace } from './call.js';
import type { TraceKit } from './kit.js';
import { ATTR, EVENT, METRIC, TASK_ATTR } from './names.js';
import { attempt, startSpan } from './safe.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The attributes of an input request's `mcp.server.operation.duration` point: its span's, without
 * the session id and the request id (unbounded values, no metric attributes) nor the peer's
 * address and port (the server metric has no address group: metrics.yaml lines 49-51).
 */
function serverMetricAttributes(attributes: Attributes): Attributes {
  const {
    [ATTR.sessionId]: _session,
    [ATTR.requestId]: _id,
    [ATTR.clientAddress]: _address,
    [ATTR.clientPort]: _port,
    ...shared
  } = attributes;
  return shared;
}

/**
 * A question's span is an `mcp.server` span (the processing of a request the peer initiated): the
 * conventions give it the peer as `client.address` and `client.port` (spans.yaml, mcp.server),
 * since on a SERVER span `server.address` would name this side. The peer is the MCP server.
 */
function asServerSpan(attributes: Attributes): Attributes {
  const { [ATTR.serverAddress]: address, [ATTR.serverPort]: port, ...rest } = attributes;
  if (address !== undefined) rest[ATTR.clientAddress] = address;
  if (port !== undefined) rest[ATTR.clientPort] = port;
  return rest;
}

/** The span of the call that created the task `input` names, when this instrumentation traced it. */
function creatorOf(kit: TraceKit, input: InstrumentedInput): SpanContext | undefined {
  const taskId = input.context.taskId;
  if (taskId === undefined) return undefined;
  return attempt('the creating span', () => kit.creators.of(kit.creators.scope(input.connection), taskId));
}

/**
 * Starts the span of `input`, asked for by the call `call` traces (when known). Its end records
 * `mcp.server.operation.duration` (metrics.yaml lines 41-51: recommended, on the receiver, from
 * the time the request was received until the result is sent), for an answer or a failure whose
 * JSON-RPC error went back; not for an abandoned one nor a failure without a code (input riding on
 * a task's update or a call's reply, left out of the answers): nothing is sent, as a client request
 * the library stopped waiting for is not measured either.
 */
export function traceInput(kit: TraceKit, input: InstrumentedInput, call: CallTrace | undefined): InputInstrument {
  const receivedAt = performance.now();
  const { method } = input;
  const meta = input.params._meta;
  // A propagator that throws reads nothing (the question's span is then the task's child).
  const extracted = isObject(meta)
    ? attempt('propagator.extract()', () => kit.reader.extract(ROOT_CONTEXT, meta, defaultTextMapGetter))
    : undefined;
  const remote = extracted === undefined ? undefined : trace.getSpanContext(extracted);
  const fromServer = remote !== undefined && trace.isSpanContextValid(remote);
  // A question of a call still open holds its span open until the answer (or its abandonment) is
  // recorded; one that comes after the call ended is not parented to its ended span, only linked.
  // Cut when its task is detached (the callback runs on, maybe for ever): its span ends with the
  // task's, marked `detached`, and the answer, if one comes, is a span of its own from then, linked
  // to the task's span (a root unless under the server's span, as a question arriving after the
  // task ended is), so that every span ends and none ends after its parent.
  let cutAt: number | undefined;
  const release = call?.hold(() => {
    const answer: Attributes = { [ATTR.method]: method, [TASK_ATTR.inputOutcome]: 'detached' };
    cutAt = Date.now();
    attempt('the input span', () => question.setAttributes(answer));
    attempt('span.end()', () => question.end());
    call.event(EVENT.inputResponse, answer);
    return true;
  });
  const open = release !== undefined;
  const ambient = context.active();
  // The context the question belongs to on this side: the call's (the caller's, with its task
  // span), else the one it was delivered in. Of the server's `_meta`, only the span context is
  // taken, as the remote parent: the server is a peer, and what else it sent (its baggage) is not
  // applied, so the callback runs with the caller's baggage and context whatever the server wrote.
  const base = open ? call!.context : ambient;
  const parent = fromServer ? trace.setSpanContext(base, remote) : base;
  const links: Link[] = call !== undefined && (fromServer || !open) ? [{ context: call.span.spanContext() }] : [];
  // A question of a task whose call has ended here (detached, timed out, its client closed) while
  // it runs on: linked to the span of the call that created it, as a resumed task's span is.
  const creator = call === undefined ? creatorOf(kit, input) : undefined;
  if (creator !== undefined) links.push({ context: creator });
  // Tied to no call (a question of the host's own request, of a task nobody traced): the span
  // current where the transport delivered it is linked, never a parent (it may be another
  // caller's), as the MCP conventions have a server span link "current ambient context, if it's
  // present" (mcp.md, Context propagation).
  const around = call === undefined ? trace.getSpanContext(ambient) : undefined;
  if (around !== undefined && trace.isSpanContextValid(around)) links.push({ context: around });
  // The connection the question came on (after a reconnection, not the call's), and the call's tool.
  const attributes: Attributes = {
    ...asServerSpan(connectionAttributes(input.connection, kit.options.server)),
    ...(call?.toolName === undefined ? {} : { [ATTR.toolName]: call.toolName }),
    [ATTR.method]: method,
  };
  // The conventions ask for the id of the request the span stands for, as a string: the server's
  // own (none for input riding on a task's update or a call's reply, which has no request of its own).
  // Some servers build that id from the task's (`task-<taskId>-<n>`, D14): a task id is a bearer
  // secret, left out of telemetry unless `recordTaskIds`, so it is fingerprinted there too.
  if (input.id !== undefined) {
    const id = String(input.id);
    attributes[ATTR.requestId] = kit.options.recordTaskIds ? id : scrubbed(id, input.context.taskId ?? call?.taskId);
  }
  // Without the server's context nor an open call, a root span: never under an ended span of its
  // call, nor under whatever span is current where the transport delivered it.
  const root = !fromServer && !open;
  const question = startSpan(kit.tracer, method, { kind: SpanKind.SERVER, attributes, links, root }, parent);
  if (open) call!.event(EVENT.inputRequest, { [ATTR.method]: method });
  // The callback runs with the question's span current: the span stands for the processing of the
  // server's request (a SERVER span), so what the callback traces (asking a person, a model) is its
  // child, rather than a child of whatever context the transport delivered the request in.
  const within = trace.setSpan(parent, question);
  return {
    run: (callback) => context.with(within, callback),
    end: (outcome: InputOutcome) => {
      const span =
        cutAt === undefined
          ? question
          : startSpan(
              kit.tracer,
              method,
              {
                kind: SpanKind.SERVER,
                attributes,
                links: [{ context: call!.span.spanContext() }],
                root: !fromServer,
                startTime: cutAt,
              },
              parent,
            );
      const answer: Attributes = { [ATTR.method]: method, [TASK_ATTR.inputOutcome]: outcome.kind };
      // The error attributes of the span, shared by its metric point.
      const errors: Attributes = {};
      if (outcome.kind === 'answered') {
        const action = isObject(outcome.result) ? outcome.result.action : undefined;
        if (typeof action === 'string') answer[TASK_ATTR.inputAction] = action;
      } else if (outcome.kind === 'failed') {
        const reading = readError(outcome.error);
        const code = outcome.code;
        // common.yaml lines 30-36 (`error.type`) and 65-83 (`rpc.response.status_code` of a
        // server): the code of the JSON-RPC error sent back is the status code, and the error type
        // when it classifies as an error (not -32700, -32600, -32601, -32602, -32002: a request
        // the receiver could not serve is no error of its own, and its span is no error either).
        // Without a code (input riding on a task's update or a call's reply: no error goes back,
        // the answer is left out, [E31]), what the callback threw, by its class name, as the
        // conventions' general `error.type` guidance has it.
        const failed = code === undefined || isServerErrorCode(code);
        if (code !== undefined) errors[ATTR.statusCode] = String(code);
        if (failed) errors[ATTR.errorType] = code === undefined ? reading.type : String(code);
        Object.assign(answer, errors);
        attempt('the input span', () => {
          span.setAttributes(errors);
          if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: reading.description });
        });
      }
      // Each step on its own: a span processor that throws leaves the others done.
      attempt('the input span', () => span.setAttributes(answer));
      attempt('span.end()', () => span.end());
      // Only what was sent to the server: an answer, or the JSON-RPC error of a failure; not a
      // failure without a code (input riding on a task's update or a call's reply left out of the
      // answers, [E31]), nor an abandoned question.
      if (outcome.kind === 'answered' || (outcome.kind === 'failed' && outcome.code !== undefined)) {
        const point = { ...serverMetricAttributes(attributes), ...errors };
        const seconds = (performance.now() - receivedAt) / 1000;
        attempt(METRIC.serverOperationDuration, () => kit.instruments.serverOperationDuration.record(seconds, point));
      }
      if (open) call!.event(EVENT.inputResponse, answer);
      release?.();
    },
  };
}
