/**
 * The spans of the calls that created tasks, by task id, kept by one instrumentation so that a
 * task resumed later in the same process (after `detach()`, by another TaskClient it serves) gets
 * a span link to the span of the call that created it. A resume reference carries no trace
 * context, so a task resumed in another process has no such link (docs/observability.md shows how
 * to carry one yourself). A task is forgotten when it ends on the server (completed, failed,
 * cancelled, expired); at most {@link MAX_CREATORS} are kept, the oldest dropped first.
 */
import type { SpanContext } from '@opentelemetry/api';
import type { TaskOutcomeKind } from '../index.js';

/**
 * Most creating spans kept: a bound on memory for a process that detaches many tasks and never
 * resumes them (an entry is a task id and a span context).
 */
export const MAX_CREATORS = 1_000;

/** Outcomes after which the task no longer runs on the server: nothing is left to resume. */
const OVER: ReadonlySet<TaskOutcomeKind> = new Set(['completed', 'failed', 'cancelled', 'expired']);

/** The creating spans of one instrumentation's tasks. */
export class CreatingSpans {
  private readonly byTask = new Map<string, SpanContext>();

  /** The call whose span is `span` created task `taskId`. */
  remember(taskId: string, span: SpanContext): void {
    this.byTask.delete(taskId);
    this.byTask.set(taskId, span);
    if (this.byTask.size > MAX_CREATORS) {
      const oldest = this.byTask.keys().next();
      if (oldest.done !== true) this.byTask.delete(oldest.value);
    }
  }

  /** The span of the call that created `taskId`, when this instrumentation traced it. */
  of(taskId: string): SpanContext | undefined {
    return this.byTask.get(taskId);
  }

  /** Task `taskId` ended for this client with `outcome`: forgotten when it ended on the server too. */
  ended(taskId: string, outcome: TaskOutcomeKind): void {
    if (OVER.has(outcome)) this.byTask.delete(taskId);
  }
}
