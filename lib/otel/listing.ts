/**
 * A page of `tasks/list` (`TaskClient.listPage`, each page of `TaskClient.list`) or of `tools/list`
 * (the tool list the TaskClient reads): each request sent for it is a span of its own, named by
 * its method (CLIENT), a child of the span current when the
 * page was asked for, with the attributes of the connection it goes over, its trace context in the request's
 * `_meta`, and an `mcp.client.operation.duration` point. A listing belongs to no task: there is no
 * task span above it, so `requests: 'events'` does not apply.
 */
import { context } from '@opentelemetry/api';
import type { CallInstrument } from '../index.js';
import type { TraceKit } from './kit.js';
import { requestSpan } from './request.js';

/** Watches one page of a listing. Call synchronously where the page is asked for (the caller's context is the parent). */
export function traceList(kit: TraceKit): CallInstrument {
  const parent = context.active();
  // Each request with the connection it goes over (a retried tasks/list may go over a new one).
  return { request: (request) => requestSpan(kit, parent, request, {}) };
}
