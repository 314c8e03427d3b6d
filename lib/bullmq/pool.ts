/**
 * The workers' connections: one `TaskClient` per server key, shared by every job of the worker,
 * plus one per HTTP session a resumed task must be read in (servers that keep tasks per session).
 * A connection lost for longer than the grace is closed: the jobs on it see `TaskClosedError` and
 * resume their tasks over a new one.
 */
import type { TaskClient } from '../index.js';
import { later, type Later } from './timer.js';

/** What the `connect` callback learns besides the server key. */
export interface ConnectContext {
  /**
   * The Streamable HTTP session to join, when the task to resume was created in one (servers
   * built on the MCP SDKs keep tasks per session). Open the transport with it (SDK v1:
   * `new StreamableHTTPClientTransport(url, { sessionId })`); `undefined` for a new connection.
   */
  readonly sessionId: string | undefined;
}

/**
 * Makes a connected `TaskClient` for the server named `server` (the key a producer put in the job).
 * For the questions of tasks to reach `answerJobInput` on 2025-11-25, its SDK client must declare
 * the `elicitation` and `sampling` capabilities (the `capabilities` option of `TaskClient.connect`);
 * on the tasks extension each call declares them itself.
 */
export type ConnectServer = (server: string, context: ConnectContext) => Promise<TaskClient>;

/** A connection lent to one job; give it back with `release()`. */
export interface Lease {
  /** The connection. */
  readonly tasks: TaskClient;
  /** Records the HTTP session a task created over this connection runs in (so a resume finds it here). */
  learned(sessionId: string | undefined): void;
  /** Gives the connection back (a session joined for one task is closed when no job uses it). */
  release(): void;
}

interface Entry {
  readonly server: string;
  /** The session joined (for a resume), or the one learned from a task created over it. */
  sessionId: string | undefined;
  /** Opened for one session only: closed when no job uses it. */
  readonly joined: boolean;
  readonly tasks: Promise<TaskClient>;
  users: number;
  dead: boolean;
  lostTimer: Later | undefined;
  /** The connection, once `connect` gave it. */
  connected?: TaskClient | undefined;
  /** Dropped while `connect` was under way (the pool closing): the release of its last lease closes it. */
  closeWhenFree?: boolean;
}

/** See the module comment. */
export class ServerPool {
  private readonly entries = new Set<Entry>();
  private closed = false;

  constructor(
    private readonly connect: ConnectServer,
    private readonly graceMs: number,
  ) {}

  /**
   * A connection to `server`, in the HTTP session `sessionId` when given.
   * @throws whatever `connect` throws (the caller retries), or an `Error` once closed.
   */
  async acquire(server: string, sessionId: string | undefined): Promise<Lease> {
    if (this.closed) throw new Error('The task processor is closed');
    let entry = this.find(server, sessionId);
    if (entry === undefined) {
      const joined = sessionId !== undefined;
      const tasks = this.connect(server, { sessionId });
      entry = { server, sessionId, joined, tasks, users: 0, dead: false, lostTimer: undefined };
      this.entries.add(entry);
      const made = entry;
      try {
        made.connected = await tasks;
        this.follow(made, made.connected);
      } catch (error) {
        this.drop(made);
        throw error;
      }
    }
    entry.users += 1;
    let tasks: TaskClient;
    try {
      tasks = await entry.tasks;
    } catch (error) {
      entry.users -= 1;
      throw error;
    }
    const leased = entry;
    let released = false;
    return {
      tasks,
      learned: (id) => {
        if (id !== undefined && leased.sessionId === undefined) leased.sessionId = id;
      },
      release: () => {
        if (released) return;
        released = true;
        leased.users -= 1;
        if (leased.users > 0) return;
        if (leased.closeWhenFree === true) tasks.close().catch(() => {});
        else if (leased.joined) this.drop(leased);
      },
    };
  }

  /** Closes every connection; remote tasks keep running. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.entries];
    for (const entry of all) this.drop(entry);
    // A connect still under way is not waited for (it may never settle): its client is closed when
    // it comes, once no lease holds it (see drop()).
    await Promise.all(all.map((entry) => entry.connected?.close().catch(() => {}) ?? Promise.resolve()));
  }

  private find(server: string, sessionId: string | undefined): Entry | undefined {
    let shared: Entry | undefined;
    for (const entry of this.entries) {
      if (entry.dead || entry.server !== server) continue;
      if (sessionId !== undefined && entry.sessionId === sessionId) return entry;
      if (sessionId === undefined && !entry.joined) shared ??= entry;
    }
    return shared;
  }

  /** Closes the entry's connection when it stays lost for longer than the grace. */
  private follow(entry: Entry, tasks: TaskClient): void {
    tasks.on('connectionLost', () => {
      entry.lostTimer?.clear();
      entry.lostTimer = later(() => this.drop(entry), this.graceMs, false);
    });
    tasks.on('connectionRestored', () => entry.lostTimer?.clear());
  }

  /** Takes the entry out of the pool and closes its connection (its handles end with TaskClosedError). */
  private drop(entry: Entry): void {
    if (entry.dead) return;
    entry.dead = true;
    entry.lostTimer?.clear();
    this.entries.delete(entry);
    if (entry.connected !== undefined) {
      entry.tasks.then((tasks) => tasks.close()).catch(() => {});
      return;
    }
    // A connect still under way (the pool closing): the connection, when it comes, is lent to the
    // runs that waited for it and closed with its last lease, so a run that gave up waiting still
    // cancels its stored task over it first. A connect that fails leaves nothing to close.
    entry.closeWhenFree = true;
  }
}
