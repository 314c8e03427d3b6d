/**
 * Where the control channel keeps what it carries: one Redis hash per job instance, holding the
 * job's cancel request and the answers to its questions, beside one revision counter per queue
 * that every write bumps. A job instance is a job id and the job's `timestamp` (set when it was
 * added): a job added again under an id that an earlier job had (a custom `jobId`) has a hash of
 * its own, and never reads what was left for its predecessor. The scripts here are the channel's
 * Redis operations, each one step.
 *
 * How long a hash lives: as long as its job, and no expiry. A job may wait in the queue for any
 * time (a paused queue, a backlog, no worker running), and what is stored for it (a cancel, an
 * answer) must be there when a worker takes it; a ttl would expire meanwhile, as nothing renews it
 * while no worker holds the job. The run that ends the job deletes its hash (control-end.ts). A
 * job that ends otherwise (removed while it waited, failed by BullMQ's stalled-job check, a delete
 * that failed) leaves its hash behind: each hash is listed in the queue's index (a sorted set, by
 * when it is due for a look), and workers holding jobs look at the hashes due and delete those
 * whose job has finished or is gone ({@link controlKeys}'s `index`; `sweep` in control-end.ts).
 */
import type { Job, Queue } from 'bullmq';
import { scriptClient } from './redis-script.js';

/** The BullMQ queue that a tool job runs on (any data type). */
export type ToolQueue = Queue;

/** One job as added to its queue: its id and its `timestamp` (see the module comment). */
export interface JobInstance {
  readonly id: string;
  readonly timestamp: number;
}

/** The instance of `job`. */
export function instanceOf(job: Pick<Job, 'id' | 'timestamp'>): JobInstance {
  return { id: job.id ?? '', timestamp: job.timestamp };
}

/** What is stored for a job: its cancel request, or the answer to one of its questions. */
export type ControlField = { readonly kind: 'cancel' } | { readonly kind: 'answer'; readonly question: string };

/** The keys of the control channel of `queue`. */
export function controlKeys(queue: ToolQueue): {
  /** The revision counter of the queue. */
  readonly rev: string;
  /**
   * The index of the queue's hashes: a sorted set of their `member`s, each scored with the
   * time (ms) it is due for a look (see the module comment).
   */
  readonly index: string;
  /** The prefix of every hash's key: a hash's key is this and its `member`. */
  readonly hashPrefix: string;
  /** The prefix of every job's key: BullMQ's hash of a job is this and the job's id. */
  readonly jobPrefix: string;
  /** What names `job`'s hash in the index: its timestamp and its id (the timestamp holds no `:`). */
  member(job: JobInstance): string;
  /** The hash of `job` (the timestamp first: it holds no `:`, so no two instances share a key). */
  hash(job: JobInstance): string;
  /** BullMQ's hash of the job (`timestamp` in it tells the instance). */
  job(job: JobInstance): string;
  /** BullMQ's lock of the job. */
  lock(job: JobInstance): string;
} {
  const hashPrefix = queue.toKey('mcp-task-client:control:');
  const member = (job: JobInstance): string => `${job.timestamp}:${job.id}`;
  return {
    rev: queue.toKey('mcp-task-client:rev'),
    index: queue.toKey('mcp-task-client:controls'),
    hashPrefix,
    jobPrefix: queue.toKey(''),
    member,
    hash: (job) => `${hashPrefix}${member(job)}`,
    job: (job) => queue.toKey(job.id),
    lock: (job) => `${queue.toKey(job.id)}:lock`,
  };
}

/** The hash field of `field`. */
export function fieldName(field: ControlField): string {
  return field.kind === 'cancel' ? 'cancel' : `a:${field.question}`;
}

/**
 * The hash field that holds the round of the answer to `question` a run took: the request's key
 * in the task's `inputRequests` on the tasks extension, '' when the request had none that names
 * one request for good (2025-11-25, input before the task exists).
 */
export function roundField(question: string): string {
  return `r:${question}`;
}

/**
 * What an answer's field holds once a worker took the answer: `taken:<run>:<the answer's JSON>`.
 * Not JSON, so no reader takes it for an answer waiting, and `answerJobInput` (which writes only a
 * field not set) refuses a second answer to the same question as answered already. The answer
 * stays in it, durable once given: a run that took it and then died (before its answer reached
 * the server, perhaps) leaves it there for the next run that meets the same request (see
 * `WatchedJob.stored` and {@link roundField}). Cleared when a run asks the same question again (a
 * new round), and when the job ends.
 */
export const TAKEN = 'taken:';

/** The field's value for `answer` (its JSON as stored) taken by `run`. */
export function taken(run: string, answer: string): string {
  return `${TAKEN}${run}:${answer}`;
}

/**
 * Lua: true when KEYS[n] (a job's hash) holds the job of timestamp `ts`, which has not finished;
 * 'gone' when no such job is there, 'finished' when it completed or failed.
 */
export const JOB_STATE = `
local function jobState(key, ts)
  local stored = redis.call('HGET', key, 'timestamp')
  if not stored or tonumber(stored) ~= tonumber(ts) then return 'gone' end
  if redis.call('HEXISTS', key, 'finishedOn') == 1 then return 'finished' end
  return 'live'
end`;

const WRITE = 'mcpTaskClientControlWrite';
/**
 * KEYS[1] the job's control hash, KEYS[2] the revision, KEYS[3] the job's hash, KEYS[4] the index;
 * ARGV[1] the field, ARGV[2] its value, ARGV[3] '1' to write only a field not set yet, ARGV[4] the
 * job's timestamp, ARGV[5] the hash's member in the index, ARGV[6] now (ms). Returns 'written',
 * 'present' (ARGV[3] found the field set), 'gone' or 'finished' (nothing written). The hash keeps
 * no expiry (one written by an earlier version loses its own), and is listed in the index, due for
 * a look now unless it was listed already (see the module comment).
 */
const WRITE_LUA = `${JOB_STATE}
local state = jobState(KEYS[3], ARGV[4])
if state ~= 'live' then return state end
if ARGV[3] == '1' then
  if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 'present' end
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('PERSIST', KEYS[1])
redis.call('ZADD', KEYS[4], 'NX', ARGV[6], ARGV[5])
redis.call('INCR', KEYS[2])
return 'written'`;

/** What {@link writeControl} did. */
export type ControlWrite = 'written' | 'present' | 'gone' | 'finished';

/**
 * Stores `value` (JSON) under `field` of `job` and tells the workers, in one step with checking
 * that the job is still there (the same instance) and has not finished.
 * @param onlyIfAbsent - leave a value already stored alone.
 */
export async function writeControl(
  queue: ToolQueue,
  job: JobInstance,
  field: ControlField,
  value: unknown,
  onlyIfAbsent: boolean,
): Promise<ControlWrite> {
  const client = await scriptClient(queue, WRITE, 4, WRITE_LUA);
  const keys = controlKeys(queue);
  const written: unknown = await client.runCommand(WRITE, [
    keys.hash(job),
    keys.rev,
    keys.job(job),
    keys.index,
    fieldName(field),
    JSON.stringify(value),
    onlyIfAbsent ? '1' : '0',
    String(job.timestamp),
    keys.member(job),
    String(Date.now()),
  ]);
  return written === 'present' || written === 'gone' || written === 'finished' ? written : 'written';
}

const POLL = 'mcpTaskClientControlPoll';
/**
 * KEYS[1] the revision; ARGV[1] the revision last read, ARGV[2] '1' to read the fields even if the
 * revision is that one, then for each watched job: its hash, its control hash, its timestamp, a
 * count of fields and those fields. Returns the revision ('' for none), 1 when the fields were read
 * (the revision changed, or ARGV[2]) else 0, then for each job 1 when it is gone (removed, or
 * another job under its id) else 0, followed (when read) by the values of its fields. The job's
 * keys come in ARGV, as BullMQ's own scripts make theirs: their number varies, and they share the
 * queue's hash slot.
 */
const POLL_LUA = `${JOB_STATE}
local rev = redis.call('GET', KEYS[1]) or ''
local read = (rev ~= ARGV[1] or ARGV[2] == '1') and 1 or 0
local out = { rev, read }
local i = 3
while i <= #ARGV do
  local job, control, ts, count = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  out[#out + 1] = jobState(job, ts) == 'gone' and 1 or 0
  if read == 1 and count > 0 then
    local values = redis.call('HMGET', control, unpack(ARGV, i + 4, i + 3 + count))
    for j = 1, count do out[#out + 1] = values[j] end
  end
  i = i + 4 + count
end
return out`;

/** A job a poll looks at, and the fields of its control hash to read. */
export interface Polled {
  readonly job: JobInstance;
  readonly fields: readonly string[];
}

/** What a poll found. */
export interface PollResult {
  readonly revision: string;
  /** Per job polled: whether it is gone, and its fields' values when they were read. */
  readonly jobs: ReadonlyArray<{ readonly gone: boolean; readonly values: ReadonlyArray<string | null> | undefined }>;
}

/**
 * Reads the revision, whether each job polled is still there, and (when the revision is not
 * `lastRevision`, or `force`) the fields asked for, in one step (see {@link POLL_LUA}).
 */
export async function poll(
  queue: ToolQueue,
  polled: readonly Polled[],
  lastRevision: string | undefined,
  force: boolean,
): Promise<PollResult> {
  const client = await scriptClient(queue, POLL, 1, POLL_LUA);
  const keys = controlKeys(queue);
  const reply = (await client.runCommand(POLL, [
    keys.rev,
    lastRevision ?? '',
    force || lastRevision === undefined ? '1' : '0',
    ...polled.flatMap(({ job, fields }) => [
      keys.job(job),
      keys.hash(job),
      String(job.timestamp),
      String(fields.length),
      ...fields,
    ]),
  ])) as unknown[];
  const read = Number(reply[1]) === 1;
  let at = 2;
  const jobs = polled.map(({ fields }) => {
    const gone = Number(reply[at]) === 1;
    at += 1;
    if (!read || fields.length === 0) return { gone, values: read ? [] : undefined };
    const values = fields.map((_, index) => {
      const value = reply[at + index];
      return typeof value === 'string' ? value : null;
    });
    at += fields.length;
    return { gone, values };
  });
  return { revision: typeof reply[0] === 'string' ? reply[0] : '', jobs };
}

const CLAIM = 'mcpTaskClientControlClaim';
/**
 * KEYS[1] the job's control hash; ARGV[1] the answer's field, ARGV[2] {@link TAKEN}, ARGV[3] this
 * run, ARGV[4] its round's field, ARGV[5] the round asked now: the answer another run took for
 * that same round (its JSON), now marked taken by this run; false when the field holds none, one
 * this run took itself, or one taken for another round (the question asked again since).
 */
const CLAIM_LUA = `
if ARGV[5] == '' or redis.call('HGET', KEYS[1], ARGV[4]) ~= ARGV[5] then return false end
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v or string.sub(v, 1, #ARGV[2]) ~= ARGV[2] then return false end
local rest = string.sub(v, #ARGV[2] + 1)
local sep = string.find(rest, ':', 1, true)
if not sep or string.sub(rest, 1, sep - 1) == ARGV[3] then return false end
local answer = string.sub(rest, sep + 1)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ARGV[3] .. ':' .. answer)
return answer`;

/**
 * The answer to `question` of `job` that another run took in the same `round`, now taken by `run`
 * (its JSON); `undefined` when none.
 */
export async function claim(
  queue: ToolQueue,
  job: JobInstance,
  question: string,
  round: string,
  run: string,
): Promise<string | undefined> {
  const client = await scriptClient(queue, CLAIM, 1, CLAIM_LUA);
  const field = fieldName({ kind: 'answer', question });
  const raw: unknown = await client.runCommand(CLAIM, [
    controlKeys(queue).hash(job),
    field,
    TAKEN,
    run,
    roundField(question),
    round,
  ]);
  return typeof raw === 'string' ? raw : undefined;
}

const REOPEN = 'mcpTaskClientControlReopen';
/**
 * KEYS[1] the job's control hash; ARGV[1] the answer's field, ARGV[2] {@link TAKEN}, ARGV[3] its
 * round's field: clears the answer only if it was taken (with its round).
 */
const REOPEN_LUA = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and string.sub(v, 1, #ARGV[2]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1], ARGV[3]) end
return 0`;

/** Clears the answer to `question` of `job` if one was taken (the question is asked again). */
export async function reopen(queue: ToolQueue, job: JobInstance, question: string): Promise<void> {
  const client = await scriptClient(queue, REOPEN, 1, REOPEN_LUA);
  await client.runCommand(REOPEN, [
    controlKeys(queue).hash(job),
    fieldName({ kind: 'answer', question }),
    TAKEN,
    roundField(question),
  ]);
}

const MARK = 'mcpTaskClientControlMark';
/**
 * KEYS[1] the job's control hash; ARGV fields and values in turn: writes them, unless the hash is
 * gone (the job ended meanwhile, and another run deleted it): nothing is made again that the
 * index does not list.
 */
const MARK_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`;

/** Marks answers taken: for each job, its fields and their new values (one round trip). */
export async function markTaken(
  queue: ToolQueue,
  marks: ReadonlyArray<{ readonly job: JobInstance; readonly values: Record<string, string> }>,
): Promise<void> {
  if (marks.length === 0) return;
  const client = await scriptClient(queue, MARK, 1, MARK_LUA);
  const keys = controlKeys(queue);
  const pipeline = client.pipeline();
  for (const { job, values } of marks) pipeline.runCommand(MARK, [keys.hash(job), ...Object.entries(values).flat()]);
  for (const [error] of (await pipeline.exec()) ?? []) if (error !== null) throw error;
}
