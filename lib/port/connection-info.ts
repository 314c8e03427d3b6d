/**
 * The connection behind a session port, as the instrumentation hook is told of it
 * (`InstrumentedConnection`): read when asked, so that a call, a request or a question is told of
 * the connection it actually goes over (a reconnection brings another port, another session).
 */
import type { InstrumentedConnection, WireKind } from '../api/index.js';
import type { SessionPort } from './port.js';

/**
 * The task wire a connection on `port` speaks: the tasks extension on a 2026-07-28 (modern)
 * session, 2025-11-25 tasks otherwise ([E20]; as `resolveWire` picks it).
 */
function wireOf(port: SessionPort): WireKind {
  return port.era() === 'modern' ? 'io.modelcontextprotocol/tasks' : '2025-11-25';
}

/**
 * The `peer` of each port's connections: one port per transport (open.ts), so one object per
 * transport, let go with its port.
 */
const peers = new WeakMap<SessionPort, object>();

/** The object that stands for `port`'s transport (`InstrumentedConnection.peer`). */
function peerOf(port: SessionPort): object {
  let peer = peers.get(port);
  if (peer === undefined) {
    peer = Object.freeze({});
    peers.set(port, peer);
  }
  return peer;
}

/** The connection behind `port`, on `wire` (by default the one its era implies). */
export function instrumentedConnection(port: SessionPort, wire: WireKind = wireOf(port)): InstrumentedConnection {
  const transport = port.transportInfo();
  return {
    wire,
    protocolVersion: port.protocolVersion(),
    // A 2026-07-28 connection has no session, whatever id an HTTP transport may still hold.
    sessionId: port.era() === 'legacy' ? port.sessionId() : undefined,
    transport: transport.kind,
    origin: transport.origin,
    peer: peerOf(port),
  };
}
