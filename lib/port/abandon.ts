/**
 * Leaving a request the library stops waiting for (its timeout, an abort): the request fails, and
 * the server is told it may stop ([R27]: it is still open), by the way its transport allows.
 */
import type { NotificationInstrument } from '../api/index.js';
import type { Pending } from './pending.js';
import type { JsonObject, PortError, SessionPort } from './port.js';
import { instrumentedConnection } from './connection-info.js';

/** What {@link abandon} needs of the port: its connection, and a way to send a notification. */
export interface AbandonHost extends SessionPort {
  notify(method: string, params: JsonObject, notice?: NotificationInstrument): void;
}

/**
 * Fails `entry` (already taken off the port's pending requests) with `error`, and tells the
 * server: a request on a stream of its own (Streamable HTTP) has that stream closed; any other
 * gets `notifications/cancelled`, except a timeout of a request that may have created a task.
 */
export function abandon(port: AbandonHost, entry: Pending, error: PortError): void {
  if (entry.post !== undefined) {
    entry.reject(error);
    entry.post.abort();
    return;
  }
  // [R24], [A5]: a request that may have created a task is never cancelled by notification.
  if (entry.quietTimeout && error.kind === 'timeout') {
    entry.reject(error);
    return;
  }
  // Its watcher hears of the notification before the request ends, while what it started for the
  // request (a span) is still open. (A closed port has no entry left: shutDown() failed them all.)
  const method = 'notifications/cancelled';
  const requestId = entry.id;
  const notice = entry.watcher?.notification?.({ method, requestId, connection: instrumentedConnection(port) });
  entry.reject(error);
  const reason = error.kind === 'timeout' ? 'Request timed out' : error.message;
  port.notify(method, { requestId, reason }, notice);
}
