/**
 * The spans of the calls that created tasks, by connection and task id, kept by one
 * instrumentation so that a task resumed later in the same process (after `detach()`, by another
 * TaskClient it serves) gets a span link to the span of the call that created it. A task id names a
 * task only on its server (on many, only in its session): two servers, or two connections, may
 * hand out the same ids (sequential ones, say), so a task is known by its id and each transport its
 * call went over (`InstrumentedConnection.peer`: the one it was created on, and the new one after a
 * reconnection), and a task resumed over another transport (another SDK client) is not linked:
 * nothing tells that it reaches the same task.
 * A resume reference carries no trace context, so a task resumed in another process has no such
 * link either (docs/observability.md shows how to carry one yourself). A task is forgotten when it
 * ends on the server (completed, failed, cancelled, expired); at most {@link MAX_CREATORS} are
 * kept, the oldest dropped first.
 */
import type { SpanContext } from '@opentelemetry/api';
import type { TaskOutcomeKind } from '../index.js';

/**
 * Most creating spans kept: a bound on memory for a process that detaches many tasks and never
 * resumes them (an entry is a transport's number, a task id and a span context).
 */
export const MAX_CREATORS = 1_000;

/** Outcomes after which the task no longer runs on the server: nothing is left to resume. */
const OVER: ReadonlySet<TaskOutcomeKind> = new Set(['completed', 'failed', 'cancelled', 'expired']);

/** The creating spans of one instrumentation's tasks. */
export class CreatingSpans {
  private readonly byTask = new Map<string, SpanContext>();
  /** A number per transport (`peer`), let go with it: the entries' keys name it by number. */
  private readonly numbers = new WeakMap<object, number>();
  private nextNumber = 0;

  /** The key of task `taskId` on the transport `peer` stands for. */
  private key(peer: object, taskId: string): string {
    let number = this.numbers.get(peer);
    if (number === undefined) {
      number = this.nextNumber++;
      this.numbers.set(peer, number);
    }
    return `${number}:${taskId}`;
  }

  /** The call whose span is `span` created task `taskId` over the transport `peer` stands for. */
  remember(peer: object, taskId: string, span: SpanContext): void {
    const key = this.key(peer, taskId);
    this.byTask.delete(key);
    this.byTask.set(key, span);
    if (this.byTask.size > MAX_CREATORS) {
      const oldest = this.byTask.keys().next();
      if (oldest.done !== true) this.byTask.delete(oldest.value);
    }
  }

  /** The span of the call that created `taskId` over `peer`'s transport, when this instrumentation traced it. */
  of(peer: object, taskId: string): SpanContext | undefined {
    return this.byTask.get(this.key(peer, taskId));
  }

  /** Task `taskId` of `peer`'s transport ended for this client with `outcome`: forgotten when it ended on the server too. */
  ended(peer: object, taskId: string, outcome: TaskOutcomeKind): void {
    if (OVER.has(outcome)) this.byTask.delete(this.key(peer, taskId));
  }
}
