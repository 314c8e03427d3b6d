/**
 * A page of `tasks/list` (`TaskClient.listPage`, each page of `TaskClient.list`) or of `tools/list`
 * (the tool list the TaskClient reads): each request sent for it is a span of its own, named by
 * its method (CLIENT), a child of the span current when the
 * page was asked for, with the connection's attributes, its trace context in the request's
 * `_meta`, and an `mcp.client.operation.duration` point. A listing belongs to no task: there is no
 * task span above it, so `requests: 'events'` does not apply.
 */
import { context } from '@opentelemetry/api';
import type { CallInstrument, InstrumentedList } from '../index.js';
import { connectionAttributes, metricAttributesOf } from './attributes.js';
import type { TraceKit } from './kit.js';
import { requestSpan } from './request.js';

/** Watches one page of a listing. Call synchronously where the page is asked for (the caller's context is the parent). */
export function traceList(kit: TraceKit, list: InstrumentedList): CallInstrument {
  const parent = context.active();
  const attributes = connectionAttributes(list.connection, kit.options.server);
  const metricAttributes = metricAttributesOf(attributes);
  return { request: (request) => requestSpan(kit, parent, request, attributes, metricAttributes) };
}
