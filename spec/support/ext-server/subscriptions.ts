/**
 * `subscriptions/listen` bookkeeping for `notifications/tasks` (core "Subscriptions" pattern and
 * SEP-2663 "Task Status Notifications"): one entry per open listen request, keyed by the link it
 * arrived on and its JSON-RPC id, which is also the `subscriptionId` every message on it carries.
 */
import { copyJson, META, type DetailedTask, type Json, type RequestId } from './wire.js';

/** A place messages can be written to: one stdio/in-memory connection, or one HTTP response. */
export interface Link {
  readonly id: number;
  /** `memory`, `stdio`, `http`, ... (for logs). */
  readonly label: string;
  /** Set once `initialize` selected the legacy era on this link (dual-era servers only). */
  legacyVersion: string | undefined;
  /** True once the link cannot carry messages any more. */
  readonly closed: boolean;
  send(message: Json): void;
}

/** How the server treats task subscriptions. */
export type NotificationMode =
  /** acknowledge the known task ids and push `notifications/tasks` on every change */
  | 'on'
  /** acknowledge with no task ids (the server agrees to nothing) and never push */
  | 'off'
  /** acknowledge the task ids but never push (a server that promises and stays silent) */
  | 'ack-only';

interface Subscription {
  readonly link: Link;
  readonly id: RequestId;
  readonly taskIds: ReadonlySet<string>;
}

/** Open task subscriptions and their delivery. */
export class TaskSubscriptions {
  private readonly open: Subscription[] = [];

  /** Registers a listen request and sends its acknowledgement (always the first message of the stream). */
  add(link: Link, id: RequestId, agreed: readonly string[]): void {
    this.open.push({ link, id, taskIds: new Set(agreed) });
    link.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        _meta: { [META.subscriptionId]: id },
        notifications: agreed.length === 0 ? {} : { taskIds: [...agreed] },
      },
    });
  }
  /** Ends a subscription the client cancelled (no response is sent for it). True if it existed. */
  cancel(link: Link, id: RequestId): boolean {
    const index = this.open.findIndex((s) => s.link === link && s.id === id);
    if (index < 0) return false;
    this.open.splice(index, 1);
    return true;
  }
  /** Drops every subscription of a closed link. */
  drop(link: Link): void {
    for (let i = this.open.length - 1; i >= 0; i -= 1) if (this.open[i]!.link === link) this.open.splice(i, 1);
  }
  /** Ends every subscription gracefully: a `{resultType:"complete"}` response tagged with its id. */
  endAll(): void {
    for (const s of this.open.splice(0)) {
      if (!s.link.closed)
        s.link.send({
          jsonrpc: '2.0',
          id: s.id,
          result: { resultType: 'complete', _meta: { [META.subscriptionId]: s.id } },
        });
    }
  }
  /**
   * Tears every subscription down without a response: a `notifications/cancelled` naming its
   * listen request, the way a server ends a request it will not answer (2026-07-28 cancellation).
   */
  cancelAll(reason: string): void {
    for (const s of this.open.splice(0)) {
      if (!s.link.closed)
        s.link.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: s.id, reason } });
    }
  }
  /** Number of open subscriptions (all links). */
  get size(): number {
    return this.open.length;
  }
  /** Pushes the full snapshot to every subscription that covers its task. */
  deliver(task: DetailedTask): void {
    for (const s of this.open) {
      if (!s.taskIds.has(task.taskId) || s.link.closed) continue;
      const params = { ...copyJson(task), _meta: { [META.subscriptionId]: s.id } };
      s.link.send({ jsonrpc: '2.0', method: 'notifications/tasks', params });
    }
  }
}
