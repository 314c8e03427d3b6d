/**
 * Progress for the library's own tokens, on any wire: `notifications/progress` whose token this
 * library issued is consumed and handed to the wire's events; every other token stays with the
 * SDK (and so with the user's own requests). On 2025-11-25 a task's token stays valid for the
 * task's whole life ([R35]); on the extension only while the `tools/call` is open ([E10]).
 */
import type { SessionPort } from '../port/port.js';
import { PROGRESS_TOKEN_PREFIX, type WireEvents } from './wire.js';

/** Taps `notifications/progress` on `port`; returns the undo. */
export function tapProgress(port: SessionPort, events: WireEvents): () => void {
  return port.onNotification('notifications/progress', (params) => {
    const token = params.progressToken;
    if (typeof token !== 'string' || !token.startsWith(PROGRESS_TOKEN_PREFIX)) return false;
    const progress = typeof params.progress === 'number' ? params.progress : Number.NaN;
    if (!Number.isFinite(progress)) return true;
    return events.progress(token, {
      progress,
      ...(typeof params.total === 'number' ? { total: params.total } : {}),
      ...(typeof params.message === 'string' ? { message: params.message } : {}),
    });
  });
}
