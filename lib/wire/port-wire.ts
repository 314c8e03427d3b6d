/**
 * What the two wires do alike on their session port: the server's identity, which errors the
 * server answered, the input the client declared, and a `tools/call`'s common params.
 */
import type { JsonObject, SessionPort } from '../port/port.js';
import { fromServer } from './errors.js';
import type { InputKind, StartToolCall } from './wire.js';

/** The part of a {@link TaskWire} that both wires share. */
export abstract class PortWire {
  constructor(protected readonly port: SessionPort) {}

  serverIdentity(): string | undefined {
    const info = this.port.serverIdentity();
    return info === undefined ? undefined : `${info.name}@${info.version}`;
  }

  answeredByServer(error: unknown): boolean {
    return fromServer(error);
  }

  inputCapabilities(): Readonly<Record<InputKind, boolean>> {
    // On the 2025-11-25 wire the SDK delivers these requests only if the client declared the
    // capability at connect time.
    const declared = this.port.clientCapabilities();
    return { elicitation: declared.elicitation !== undefined, sampling: declared.sampling !== undefined };
  }
}

/**
 * A `tools/call`'s params as every wire sends them: the name, the arguments, `task` when given (the
 * 2025-11-25 wire's), and the `_meta` (progress token included), in that order.
 */
export function callParams(call: StartToolCall, task?: JsonObject): JsonObject {
  const params: JsonObject = { name: call.name };
  if (call.arguments !== undefined) params.arguments = call.arguments;
  if (task !== undefined) params.task = task;
  if (call.meta !== undefined || call.progressToken !== undefined) {
    params._meta =
      call.progressToken === undefined ? { ...call.meta } : { ...call.meta, progressToken: call.progressToken };
  }
  return params;
}
