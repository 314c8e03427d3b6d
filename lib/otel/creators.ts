/**
 * The spans of the calls that created tasks, by connection and task id, kept by one
 * instrumentation so that a task resumed later in the same process (after `detach()`, by another
 * TaskClient it serves) gets a span link to the span of the call that created it. A task id names a
 * task only on its server (on many, only in its session): two servers, or two connections, may
 * hand out the same ids (sequential ones, say), so a task is known by its id and the scope of each
 * connection its call went over (the one it was created on, and the new one after a
 * reconnection). A connection's scope is its HTTP session when it has one (its server's origin and
 * its session id: another transport that joins the same session, a fresh SDK client resuming a
 * reference, reaches the same tasks), else its transport (`InstrumentedConnection.peer`). A task
 * resumed over another transport into another session, or over another transport without sessions
 * (another SDK client on stdio), is not linked: nothing tells that it reaches the same task.
 * A resume reference carries no trace context, so a task resumed in another process has no such
 * link either (docs/observability.md shows how to carry one yourself). A task is forgotten when it
 * ends on the server (completed, failed, cancelled, expired); at most {@link MAX_CREATORS} are
 * kept, the oldest dropped first.
 */
import type { SpanContext } from '@opentelemetry/api';
import type { InstrumentedConnection, TaskOutcomeKind } from '../index.js';

/**
 * Most creating spans kept: a bound on memory for a process that detaches many tasks and never
 * resumes them (an entry is a connection's scope, a task id and a span context).
 */
export const MAX_CREATORS = 1_000;

/** Outcomes after which the task no longer runs on the server: nothing is left to resume. */
const OVER: ReadonlySet<TaskOutcomeKind> = new Set(['completed', 'failed', 'cancelled', 'expired']);

/** The creating spans of one instrumentation's tasks. */
export class CreatingSpans {
  private readonly byTask = new Map<string, SpanContext>();
  /** A number per transport (`peer`), let go with it: the scope of a connection without a session names it by number. */
  private readonly numbers = new WeakMap<object, number>();
  private nextNumber = 0;

  /**
   * The scope of `connection`, where its task ids name tasks: its HTTP session (origin and session
   * id) when it has one, else its transport.
   */
  scope(connection: InstrumentedConnection): string {
    const { sessionId, origin } = connection;
    if (sessionId !== undefined && origin !== undefined) return `session ${origin} ${sessionId}`;
    let number = this.numbers.get(connection.peer);
    if (number === undefined) {
      number = this.nextNumber++;
      this.numbers.set(connection.peer, number);
    }
    return `peer ${number}`;
  }

  /** The call whose span is `span` created task `taskId` in `scope` (a {@link CreatingSpans.scope}). */
  remember(scope: string, taskId: string, span: SpanContext): void {
    const key = `${scope}:${taskId}`;
    this.byTask.delete(key);
    this.byTask.set(key, span);
    if (this.byTask.size > MAX_CREATORS) {
      const oldest = this.byTask.keys().next();
      if (oldest.done !== true) this.byTask.delete(oldest.value);
    }
  }

  /** The span of the call that created `taskId` in `scope`, when this instrumentation traced it. */
  of(scope: string, taskId: string): SpanContext | undefined {
    return this.byTask.get(`${scope}:${taskId}`);
  }

  /** Task `taskId` of `scope` ended for this client with `outcome`: forgotten when it ended on the server too. */
  ended(scope: string, taskId: string, outcome: TaskOutcomeKind): void {
    if (OVER.has(outcome)) this.byTask.delete(`${scope}:${taskId}`);
  }
}
