/**
 * The faults a contract driver queues per wire operation (`malformedNext`, `otherTaskNext`,
 * `failNext`, `holdNext`): one queue shape for the scripted servers of both wires and the fake
 * server, each of which serves a taken fault in its own protocol form.
 */
import type { Json, ServerError, WireDriver, WireOp } from './support.js';

/** One queued fault: the next request of its operation is answered this way. */
export type Fault =
  | { kind: 'malformed' }
  | { kind: 'other' }
  | { kind: 'fail'; error: ServerError }
  | { kind: 'hold'; gate: Promise<void> };

/** The driver methods that queue faults. */
export type FaultControls = Pick<WireDriver, 'malformedNext' | 'otherTaskNext' | 'failNext' | 'holdNext'>;

/** Faults queued per operation, each taken by the next request of that operation. */
export class FaultQueue {
  private readonly queued = new Map<WireOp, Fault[]>();

  add(op: WireOp, fault: Fault): void {
    this.queued.set(op, [...(this.queued.get(op) ?? []), fault]);
  }

  /** The fault for the request of `op` now being served, if one was queued. */
  take(op: WireOp): Fault | undefined {
    return this.queued.get(op)?.shift();
  }

  /** The driver's fault methods, queueing here. */
  controls(): FaultControls {
    return {
      malformedNext: (op) => this.add(op, { kind: 'malformed' }),
      otherTaskNext: (op) => this.add(op, { kind: 'other' }),
      failNext: (op, error) => this.add(op, { kind: 'fail', error }),
      holdNext: (op) => {
        let release = (): void => {};
        this.add(op, { kind: 'hold', gate: new Promise<void>((resolve) => (release = resolve)) });
        return () => release();
      },
    };
  }
}

/** How a scripted server writes a fault's reply in its own protocol form. */
export interface FaultForms<C> {
  malformed(params: Json, ctx: C): unknown;
  other(params: Json, ctx: C): unknown;
  /** The thrown JSON-RPC error of a `fail` fault. */
  fail(error: ServerError): Error;
}

/**
 * A request handler serving `op` as `normal` does, unless a fault is queued for it: a held reply
 * waits for its release, and the other faults are answered in `forms`.
 */
export function withFaults<C>(
  faults: FaultQueue,
  op: WireOp,
  normal: (params: Json, ctx: C) => unknown,
  forms: FaultForms<C>,
): (params: Json, ctx: C) => Promise<unknown> {
  return async (params, ctx) => {
    const fault = faults.take(op);
    switch (fault?.kind) {
      case undefined:
        return normal(params, ctx);
      case 'hold':
        await fault.gate;
        return normal(params, ctx);
      case 'fail':
        throw forms.fail(fault.error);
      case 'malformed':
        return forms.malformed(params, ctx);
      case 'other':
        return forms.other(params, ctx);
    }
  };
}
