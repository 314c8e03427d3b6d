/**
 * The control channel between any process and the worker that holds a job: answers to a task's
 * questions and requests to cancel, kept in Redis per job (see control-store.ts). Writers store a
 * field and bump the queue's revision counter in one script; each worker polls every `pollMs` (one
 * script per worker, whatever its number of jobs), which reads the counter, checks that each job
 * it holds is still there, and reads the fields of its jobs only when the counter changed.
 * What is written survives the worker: a job resumed elsewhere finds its answers and its cancel.
 * A job removed while a worker runs it (`obliterate({ force: true })`, a key deleted) is seen at
 * the next poll and cancelled: nobody could see its result. Once a minute at most, a worker's read
 * also deletes what jobs that ended without a run of the library left (see `sweep`).
 */
import { randomUUID } from 'node:crypto';
import { clearFields, finish, sweep, SWEEP_EVERY_MS } from './control-end.js';
import {
  claim,
  fieldName,
  markTaken,
  poll,
  reopen,
  roundField,
  taken,
  type JobInstance,
  type ToolQueue,
} from './control-store.js';
import { atMost, later, type Later } from './timer.js';

export type { ToolQueue } from './control-store.js';

/** The reason a run is cancelled with when its job is removed from the queue while it runs. */
const REMOVED = 'the job was removed from the queue';
/** How long a run that ends waits for its clear to be written (see {@link WatchedJob.release}). */
export const RELEASE_WAIT_MS = 5_000;

/**
 * How a run ends, for what it leaves on the channel: `handed-back` (the job goes back to the queue:
 * everything stays for the run that takes it next), `attempt` (this BullMQ attempt failed and
 * another follows: the answers this run took or waited for are cleared, a cancel it did not see
 * stays for the next attempt), `done` (the job ends: completed, failed for good; all is deleted).
 * A run that no longer holds its job's lock (it expired: the job is back in the queue, or another
 * worker's) clears nothing: what is stored is the job's next run's (see control-end.ts).
 */
export type RunRelease = 'handed-back' | 'attempt' | 'done';

/** One job's side of the channel, held by the worker that runs it. */
export interface WatchedJob {
  /** Resolves with the reason once a cancel is requested for the job, or the job is removed. */
  readonly cancelled: Promise<string>;
  /** Resolves once the channel was read for this job (a cancel stored before it started is known then). */
  readonly ready: Promise<void>;
  /**
   * Resolves with the answer stored for `question` (once it is, which may be at once), and marks
   * it taken in `round` (a second answer is refused). Rejects with `signal`'s reason when it
   * aborts first.
   * @param round - what names the server's request for good (the tasks extension's
   *   `inputRequests` key), `undefined` when nothing does.
   */
  answer(question: string, signal: AbortSignal, round: string | undefined): Promise<unknown>;
  /**
   * The answer to `question` that another run of the job took for the same `round` (it died, or
   * lost the job, perhaps before its answer reached the server), now taken by this run;
   * `undefined` when there is none, or no `round`. Call it before asking: the user answered that
   * request once, and the answer is sent again. The same question asked in another round is a
   * new request, and is asked.
   */
  stored(question: string, round: string | undefined): Promise<unknown>;
  /**
   * Makes `question` answerable again when an earlier answer to it was taken (the task asks the
   * same thing again): call it before the question shows on the job.
   */
  reopen(question: string): Promise<void>;
  /**
   * Stops watching; clears what the job left on the channel as `end` says (see {@link RunRelease}).
   * Settles (never rejects) once the clear is written, or failed and reported, or after
   * {@link RELEASE_WAIT_MS}: a run awaits it before it ends, since BullMQ drops the job's lock
   * as soon as the run ends (a retry, a delay), and the clear is refused without it.
   */
  release(end: RunRelease): Promise<void>;
}

interface Watched {
  readonly job: JobInstance;
  /** The key of the job instance in {@link ControlWatch}. */
  readonly key: string;
  /** This run's id, in the answers it takes. */
  readonly run: string;
  /** The token of the job's lock this run holds (`undefined`: none known). */
  readonly token: string | undefined;
  cancelSeen: boolean;
  /** The job was found removed (its run is cancelled once). */
  removed: boolean;
  cancel: (reason: string) => void;
  readonly read: () => void;
  /** The questions waiting for an answer: how to deliver it, and the round each was asked in. */
  readonly waiting: Map<string, { readonly deliver: (answer: unknown) => void; readonly round: string | undefined }>;
  /** Questions asked for this job whose fields may remain to clear. */
  readonly asked: Set<string>;
}

/** Reads the channel for the jobs of one worker (see the module comment). */
export class ControlWatch {
  /**
   * The watches by job instance. One job can have more than one run in a worker (its lock
   * expired, it came back to this worker while the first run goes on): each run has its own watch.
   */
  private readonly jobs = new Map<string, Set<Watched>>();
  private lastRev: string | undefined = undefined;
  /** A job or a question was added since the last read: read the fields even if the revision is the same. */
  private dirty = false;
  private timer: Later | undefined = undefined;
  private reading = false;
  private stopped = false;
  /** When this worker looks next at the queue's hashes due (see {@link sweep}): at its first read. */
  private nextSweep = 0;

  constructor(
    private readonly queue: ToolQueue,
    private readonly pollMs: number,
    private readonly problem: (jobId: string, error: Error) => void,
  ) {}

  /** Starts watching `job` (run with the lock `token`); its stored cancel (if any) is read at once. */
  watch(job: JobInstance, token: string | undefined): WatchedJob {
    let cancel!: (reason: string) => void;
    const cancelled = new Promise<string>((resolve) => (cancel = resolve));
    let read!: () => void;
    const ready = new Promise<void>((resolve) => (read = resolve));
    const key = `${job.timestamp}:${job.id}`;
    const watched: Watched = {
      job,
      key,
      run: randomUUID(),
      token,
      cancelSeen: false,
      removed: false,
      cancel,
      read,
      waiting: new Map(),
      asked: new Set(),
    };
    let runs = this.jobs.get(key);
    if (runs === undefined) this.jobs.set(key, (runs = new Set()));
    runs.add(watched);
    this.wake();
    return {
      cancelled,
      ready,
      answer: (question, signal, round) => this.answer(watched, question, signal, round),
      stored: (question, round) => this.stored(watched, question, round),
      reopen: (question) => reopen(this.queue, watched.job, question),
      release: (end) => this.release(watched, end),
    };
  }

  /** Stops reading. */
  stop(): void {
    this.stopped = true;
    this.timer?.clear();
  }

  private async stored(watched: Watched, question: string, round: string | undefined): Promise<unknown> {
    // Without a round, nothing tells a request asked again from a new one: it is asked.
    if (round === undefined) return undefined;
    // Its field, now this run's, is cleared when the run ends.
    watched.asked.add(question);
    const raw = await claim(this.queue, watched.job, question, round, watched.run);
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return undefined;
    }
  }

  private answer(watched: Watched, question: string, signal: AbortSignal, round: string | undefined): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        watched.waiting.delete(question);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      watched.asked.add(question);
      const deliver = (answer: unknown): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      watched.waiting.set(question, { deliver, round });
      this.wake();
    });
  }

  /** Removes this run's watch; what the job left on the channel is cleared once no other run of it needs it. */
  private release(watched: Watched, end: RunRelease): Promise<void> {
    const runs = this.jobs.get(watched.key);
    if (runs?.delete(watched) !== true) return Promise.resolve();
    if (runs.size === 0) this.jobs.delete(watched.key);
    if (end === 'handed-back') return Promise.resolve();
    const report = (error: unknown): void =>
      this.problem(watched.job.id, error instanceof Error ? error : new Error(String(error)));
    const others = [...runs];
    let written: Promise<void>;
    if (end === 'done' && others.length === 0) written = finish(this.queue, watched.job, watched.token);
    else {
      const fields = [...watched.asked]
        .filter((question) => !others.some((other) => other.asked.has(question)))
        .flatMap((question) => [fieldName({ kind: 'answer', question }), roundField(question)]);
      if (watched.cancelSeen && others.length === 0) fields.push(fieldName({ kind: 'cancel' }));
      if (fields.length === 0) return Promise.resolve();
      written = clearFields(this.queue, watched.job, watched.token, fields);
    }
    // Redis away: the run ends after the wait, and the script, still queued, may find the lock gone.
    return atMost(written.catch(report), RELEASE_WAIT_MS, undefined, false);
  }

  /** Reads soon: a job or a question was added. */
  private wake(): void {
    this.dirty = true;
    this.schedule(0);
  }

  private schedule(delay: number): void {
    if (this.stopped || this.reading) return;
    this.timer?.clear();
    this.timer = later(() => void this.read(), delay, false);
  }

  private async read(): Promise<void> {
    if (this.jobs.size === 0) return;
    this.reading = true;
    let failed = false;
    try {
      await this.readOnce();
      await this.sweepIfDue();
    } catch (error) {
      failed = true;
      // Redis is away: the next read tries again. Nothing is lost: the values stay stored.
      for (const runs of this.jobs.values()) {
        const [first] = runs;
        if (first !== undefined) this.problem(first.job.id, error instanceof Error ? error : new Error(String(error)));
      }
    } finally {
      this.reading = false;
    }
    // After a failed read, the next one waits a poll even when dirty (no busy loop while Redis is away).
    if (this.jobs.size > 0) this.schedule(this.dirty && !failed ? 0 : this.pollMs);
  }

  /** Deletes the hashes due whose job has ended, at most once a minute (see {@link sweep}). */
  private async sweepIfDue(): Promise<void> {
    const now = Date.now();
    if (now < this.nextSweep) return;
    this.nextSweep = now + SWEEP_EVERY_MS;
    // Nothing a run needs: Redis away, the read says so, and the next look is a minute later.
    await sweep(this.queue, now).catch(() => {});
  }

  private async readOnce(): Promise<void> {
    // Cleared before the read, so a job or question added while it runs reads again; put back if
    // the read fails, so what was added is read at the next poll even if the revision stays.
    const dirty = this.dirty;
    this.dirty = false;
    const watches = [...this.jobs.values()].map((runs) => [...runs]);
    const polled = watches.map((runs) => {
      const fields = new Set<string>();
      for (const watched of runs) {
        if (!watched.cancelSeen) fields.add(fieldName({ kind: 'cancel' }));
        for (const question of watched.waiting.keys()) fields.add(fieldName({ kind: 'answer', question }));
      }
      return { job: runs[0]!.job, fields: [...fields] };
    });
    let found: Awaited<ReturnType<typeof poll>>;
    try {
      found = await poll(this.queue, polled, this.lastRev, dirty);
    } catch (error) {
      this.dirty ||= dirty;
      throw error;
    }
    this.lastRev = found.revision;
    const marks: Array<{ job: JobInstance; values: Record<string, string> }> = [];
    for (const [index, runs] of watches.entries()) {
      const { gone, values } = found.jobs[index]!;
      // A run released while the poll was out (its job finished, and `removeOnComplete` deleted
      // it) was not removed under it.
      const removed = gone
        ? runs.filter((watched) => !watched.removed && this.jobs.get(watched.key)?.has(watched) === true)
        : [];
      if (removed.length > 0) {
        // Removed while it runs: nobody can see its result, and its task is cancelled.
        const { id } = runs[0]!.job;
        this.problem(id, new Error(`Job ${id} was removed from the queue while it ran: its task is cancelled`));
        for (const watched of removed) {
          watched.removed = true;
          this.cancelWith(watched, REMOVED);
        }
      }
      if (values === undefined) continue;
      const byField = new Map(polled[index]!.fields.map((field, at) => [field, values[at] ?? null]));
      const taking: Record<string, string> = {};
      for (const watched of runs) {
        this.deliver(watched, byField, taking);
        watched.read();
      }
      if (Object.keys(taking).length > 0) marks.push({ job: runs[0]!.job, values: taking });
    }
    // An answer is taken once: its field is marked taken, so that a second answer to the same
    // question is refused (it would otherwise stay, and answer that question when asked again);
    // the same question asked again by this run is reopened first (see reopen()) and waits for a
    // new answer. The answer stays in the mark, for a run that takes the job over (stored()).
    await markTaken(this.queue, marks);
  }

  private cancelWith(watched: Watched, reason: string): void {
    watched.cancelSeen = true;
    watched.cancel(reason);
  }

  /** Gives `watched` what the read found for it; the answers it takes go into `taking`. */
  private deliver(watched: Watched, values: ReadonlyMap<string, string | null>, taking: Record<string, string>): void {
    const cancel = watched.cancelSeen ? null : (values.get(fieldName({ kind: 'cancel' })) ?? null);
    if (cancel !== null) {
      const value = parsed(cancel);
      if (value !== undefined) {
        const reason =
          typeof value === 'object' && value !== null && typeof (value as { reason?: unknown }).reason === 'string'
            ? (value as { reason: string }).reason
            : 'cancelled';
        this.cancelWith(watched, reason);
      }
    }
    for (const [question, { deliver, round }] of [...watched.waiting]) {
      const field = fieldName({ kind: 'answer', question });
      const raw = values.get(field) ?? null;
      if (raw === null) continue;
      const value = parsed(raw);
      // Taken already (not JSON), or not written by writeControl: ignored.
      if (value === undefined) continue;
      // Still asked: its field (marked taken) is cleared when the run ends.
      watched.waiting.delete(question);
      taking[field] = taken(watched.run, raw);
      taking[roundField(question)] = round ?? '';
      deliver(value);
    }
  }
}

/** `raw` parsed as JSON; `undefined` when it is not JSON. */
function parsed(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
