/**
 * What every wire's `subscribe` taps besides its own status notifications: tool-list changes,
 * progress for the library's tokens, and the end of the session.
 */
import type { SessionPort } from '../port/port.js';
import { tapProgress } from './progress.js';
import type { WireEvents } from './wire.js';

/** Taps the session-wide notifications on `port`, plus `own` (the wire's own taps); returns one undo. */
export function tapSession(port: SessionPort, events: WireEvents, own: readonly (() => void)[]): () => void {
  const offs = [
    ...own,
    port.onNotification('notifications/tools/list_changed', () => {
      events.toolsChanged();
    }),
    tapProgress(port, events),
    port.onClose(() => events.closed()),
  ];
  return () => {
    for (const off of offs) off();
  };
}
