/**
 * The control channel between any process and the worker that holds a job: answers to a task's
 * questions and requests to cancel, kept in one Redis hash per queue. Writers store a field and
 * bump a revision counter in one script; each worker reads the counter every `pollMs` (one `GET`
 * per worker, whatever its number of jobs) and the fields of its own jobs only when it changed.
 * What is written survives the worker: a job resumed elsewhere finds its answers and its cancel.
 */
import { randomUUID } from 'node:crypto';
import type { Queue, RedisClient } from 'bullmq';
import { scriptClient } from './redis-script.js';
import { later, type Later } from './timer.js';

/** The BullMQ queue that a tool job runs on (any data type). */
export type ToolQueue = Queue;

/** What is stored for a job: its cancel request, or the answer to one of its questions. */
export type ControlField = { readonly kind: 'cancel' } | { readonly kind: 'answer'; readonly question: string };

const SCRIPT = 'mcpTaskClientControl';
/**
 * KEYS[1] the hash, KEYS[2] the revision; ARGV[1] the field, ARGV[2] its value, ARGV[3] '1' to
 * write only a field not set yet. Returns 1 when written, 0 when it was set already.
 */
const LUA = `
if ARGV[3] == '1' then
  if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('INCR', KEYS[2])
return 1`;

/** The Redis client of `queue`, with the control script defined on it. */
function clientOf(queue: ToolQueue): Promise<RedisClient> {
  return scriptClient(queue, SCRIPT, 2, LUA);
}

/**
 * What an answer's field holds once a worker took the answer: `taken:<run>:<the answer's JSON>`.
 * Not JSON, so no reader takes it for an answer waiting, and `answerJobInput` (which writes only a
 * field not set) refuses a second answer to the same question as answered already. The answer
 * stays in it, durable once given: a run that took it and then died (before its answer reached
 * the server, perhaps) leaves it there, and the next run that asks the same question sends it
 * rather than ask the user again (see {@link WatchedJob.stored}). Cleared when the same run asks
 * the same question again (a new round), and when the job's run ends.
 */
const TAKEN = 'taken:';

/** The field's value for `answer` (its JSON as stored) taken by `run`. */
function taken(run: string, answer: string): string {
  return `${TAKEN}${run}:${answer}`;
}

const REOPEN = 'mcpTaskClientControlReopen';
/** KEYS[1] the hash; ARGV[1] the field, ARGV[2] {@link TAKEN}: clears the field only if it holds a taken answer. */
const REOPEN_LUA = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and string.sub(v, 1, #ARGV[2]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`;

const CLAIM = 'mcpTaskClientControlClaim';
/**
 * KEYS[1] the hash; ARGV[1] the field, ARGV[2] {@link TAKEN}, ARGV[3] this run: the answer another
 * run took (its JSON), now marked taken by this run; false when the field holds none, or one this
 * run took itself.
 */
const CLAIM_LUA = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v or string.sub(v, 1, #ARGV[2]) ~= ARGV[2] then return false end
local rest = string.sub(v, #ARGV[2] + 1)
local sep = string.find(rest, ':', 1, true)
if not sep or string.sub(rest, 1, sep - 1) == ARGV[3] then return false end
local answer = string.sub(rest, sep + 1)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ARGV[3] .. ':' .. answer)
return answer`;

/** The keys of `queue`'s control hash and revision counter. */
function keysOf(queue: ToolQueue): { readonly hash: string; readonly rev: string } {
  return { hash: queue.toKey('mcp-task-client:control'), rev: queue.toKey('mcp-task-client:rev') };
}

/** The hash field of `field` for `jobId` (JSON, so no job id can make two fields collide). */
function fieldName(jobId: string, field: ControlField): string {
  return JSON.stringify(field.kind === 'cancel' ? [jobId, 'cancel'] : [jobId, 'answer', field.question]);
}

/**
 * Stores `value` (JSON) under `field` of `jobId` and tells the workers.
 * @param onlyIfAbsent - leave a value already stored alone.
 * @returns false when `onlyIfAbsent` found one.
 */
export async function writeControl(
  queue: ToolQueue,
  jobId: string,
  field: ControlField,
  value: unknown,
  onlyIfAbsent: boolean,
): Promise<boolean> {
  const client = await clientOf(queue);
  const { hash, rev } = keysOf(queue);
  const written: unknown = await client.runCommand(SCRIPT, [
    hash,
    rev,
    fieldName(jobId, field),
    JSON.stringify(value),
    onlyIfAbsent ? '1' : '0',
  ]);
  return Number(written) === 1;
}

/** One job's side of the channel, held by the worker that runs it. */
export interface WatchedJob {
  /** Resolves with the reason once a cancel is requested for the job. */
  readonly cancelled: Promise<string>;
  /** Resolves once the channel was read for this job (a cancel stored before it started is known then). */
  readonly ready: Promise<void>;
  /**
   * Resolves with the answer stored for `question` (once it is, which may be at once), and marks
   * it taken (a second answer is refused). Rejects with `signal`'s reason when it aborts first.
   */
  answer(question: string, signal: AbortSignal): Promise<unknown>;
  /**
   * The answer to `question` that another run of the job took (it died, or lost the job, perhaps
   * before its answer reached the server), now taken by this run; `undefined` when there is none.
   * Call it before asking: the user answered once, and that answer is sent again.
   */
  stored(question: string): Promise<unknown>;
  /**
   * Makes `question` answerable again when an earlier answer to it was taken (the task asks the
   * same thing again): call it before the question shows on the job.
   */
  reopen(question: string): Promise<void>;
  /**
   * Stops watching. Clears what this job left on the channel (the answers this run took or
   * waited for, a cancel it saw), unless `handedBack`: the job goes back to the queue, and the run
   * that takes it next needs them (an answer the user gave is not asked for again).
   */
  release(handedBack?: boolean): void;
}

interface Watched {
  readonly jobId: string;
  /** This run's id, in the answers it takes. */
  readonly run: string;
  cancelSeen: boolean;
  cancel: (reason: string) => void;
  readonly read: () => void;
  readonly waiting: Map<string, (answer: unknown) => void>;
  /** Questions asked for this job whose fields may remain to clear. */
  readonly asked: Set<string>;
}

/** Reads the channel for the jobs of one worker (see the module comment). */
export class ControlWatch {
  /**
   * The watches by job id. One job can have more than one run in a worker (its lock expired, it
   * came back to this worker while the first run goes on): each run has its own watch.
   */
  private readonly jobs = new Map<string, Set<Watched>>();
  private lastRev: string | null | undefined = undefined;
  /** A job or a question was added since the last read: read the fields even if the revision is the same. */
  private dirty = false;
  private timer: Later | undefined = undefined;
  private reading = false;
  private stopped = false;

  constructor(
    private readonly queue: ToolQueue,
    private readonly pollMs: number,
    private readonly problem: (jobId: string, error: Error) => void,
  ) {}

  /** Starts watching `jobId`; its stored cancel (if any) is read at once. */
  watch(jobId: string): WatchedJob {
    let cancel!: (reason: string) => void;
    const cancelled = new Promise<string>((resolve) => (cancel = resolve));
    let read!: () => void;
    const ready = new Promise<void>((resolve) => (read = resolve));
    const watched: Watched = {
      jobId,
      run: randomUUID(),
      cancelSeen: false,
      cancel,
      read,
      waiting: new Map(),
      asked: new Set(),
    };
    let runs = this.jobs.get(jobId);
    if (runs === undefined) this.jobs.set(jobId, (runs = new Set()));
    runs.add(watched);
    this.wake();
    return {
      cancelled,
      ready,
      answer: (question, signal) => this.answer(watched, question, signal),
      stored: (question) => this.stored(watched, question),
      reopen: (question) => this.reopen(watched, question),
      release: (handedBack = false) => this.release(watched, handedBack),
    };
  }

  /** Stops reading. */
  stop(): void {
    this.stopped = true;
    this.timer?.clear();
  }

  private async stored(watched: Watched, question: string): Promise<unknown> {
    const client = await scriptClient(this.queue, CLAIM, 1, CLAIM_LUA);
    const field = fieldName(watched.jobId, { kind: 'answer', question });
    // Its field, now this run's, is cleared when the run ends.
    watched.asked.add(question);
    const raw: unknown = await client.runCommand(CLAIM, [keysOf(this.queue).hash, field, TAKEN, watched.run]);
    if (typeof raw !== 'string') return undefined;
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return undefined;
    }
  }

  private async reopen(watched: Watched, question: string): Promise<void> {
    const client = await scriptClient(this.queue, REOPEN, 1, REOPEN_LUA);
    const field = fieldName(watched.jobId, { kind: 'answer', question });
    await client.runCommand(REOPEN, [keysOf(this.queue).hash, field, TAKEN]);
  }

  private answer(watched: Watched, question: string, signal: AbortSignal): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        watched.waiting.delete(question);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      watched.asked.add(question);
      watched.waiting.set(question, (answer) => {
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      });
      this.wake();
    });
  }

  /** Removes this run's watch; what the job left on the channel is cleared once no other run of it needs it. */
  private release(watched: Watched, handedBack: boolean): void {
    const runs = this.jobs.get(watched.jobId);
    if (runs?.delete(watched) !== true) return;
    if (runs.size === 0) this.jobs.delete(watched.jobId);
    if (handedBack) return;
    const others = [...runs];
    const fields = [...watched.asked]
      .filter((question) => !others.some((other) => other.asked.has(question)))
      .map((question) => fieldName(watched.jobId, { kind: 'answer', question }));
    if (watched.cancelSeen && others.length === 0) fields.push(fieldName(watched.jobId, { kind: 'cancel' }));
    if (fields.length > 0) this.clear(watched.jobId, fields);
  }

  private clear(jobId: string, fields: string[]): void {
    clientOf(this.queue)
      .then((client) => client.hdel(keysOf(this.queue).hash, ...fields))
      .catch((error: unknown) => this.problem(jobId, error instanceof Error ? error : new Error(String(error))));
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
    } catch (error) {
      failed = true;
      // Redis is away: the next read tries again. Nothing is lost: the values stay stored.
      for (const jobId of this.jobs.keys())
        this.problem(jobId, error instanceof Error ? error : new Error(String(error)));
    } finally {
      this.reading = false;
    }
    // After a failed read, the next one waits a poll even when dirty (no busy loop while Redis is away).
    if (this.jobs.size > 0) this.schedule(this.dirty && !failed ? 0 : this.pollMs);
  }

  private async readOnce(): Promise<void> {
    const client = await clientOf(this.queue);
    const { hash, rev } = keysOf(this.queue);
    const revision = await client.get(rev);
    if (revision === this.lastRev && !this.dirty) return;
    // Cleared before the read, so a job or question added while it runs reads again; put back if
    // the read fails, so what was added is read at the next poll even if the revision stays.
    const dirty = this.dirty;
    this.dirty = false;
    const wanted: Array<{ readonly watched: Watched; readonly field: ControlField }> = [];
    for (const watched of [...this.jobs.values()].flatMap((runs) => [...runs])) {
      if (!watched.cancelSeen) wanted.push({ watched, field: { kind: 'cancel' } });
      for (const question of watched.waiting.keys()) wanted.push({ watched, field: { kind: 'answer', question } });
    }
    if (wanted.length === 0) {
      this.lastRev = revision;
      return;
    }
    let values: Array<string | null>;
    try {
      values = await client.hmget(hash, ...wanted.map(({ watched, field }) => fieldName(watched.jobId, field)));
    } catch (error) {
      this.dirty ||= dirty;
      throw error;
    }
    this.lastRev = revision;
    const consumed: Array<[string, string]> = [];
    for (const [index, { watched, field }] of wanted.entries()) {
      const raw = values[index];
      if (raw === null || raw === undefined) continue;
      let value: unknown;
      try {
        value = JSON.parse(raw) as unknown;
      } catch {
        continue; // not written by writeControl: ignored
      }
      if (field.kind === 'cancel') {
        watched.cancelSeen = true;
        const reason =
          typeof value === 'object' && value !== null && typeof (value as { reason?: unknown }).reason === 'string'
            ? (value as { reason: string }).reason
            : 'cancelled';
        watched.cancel(reason);
        continue;
      }
      const deliver = watched.waiting.get(field.question);
      if (deliver === undefined) continue;
      // Still asked: its field (marked taken) is cleared when the run ends.
      watched.waiting.delete(field.question);
      consumed.push([fieldName(watched.jobId, field), taken(watched.run, raw)]);
      deliver(value);
    }
    for (const { watched, field } of wanted) if (field.kind === 'cancel') watched.read();
    // An answer is taken once: its field is marked taken, so that a second answer to the same
    // question is refused (it would otherwise stay, and answer that question when asked again);
    // the same question asked again by this run is reopened first (see reopen()) and waits for a
    // new answer. The answer stays in the mark, for a run that takes the job over (stored()).
    if (consumed.length > 0) await client.hset(hash, Object.fromEntries(consumed));
  }
}
