/**
 * The faults a contract driver queues per wire operation (`malformedNext`, `otherTaskNext`,
 * `failNext`, `holdNext`): one queue shape for the scripted servers of both wires and the fake
 * server, each of which serves a taken fault in its own protocol form.
 */
import type { ServerError, WireDriver, WireOp } from './support.js';

/** One queued fault: the next request of its operation is answered this way. */
export type Fault = { kind: 'malformed' } | { kind: 'other' } | { kind: 'fail'; error: ServerError } | { kind: 'hold'; gate: Promise<void> };

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
