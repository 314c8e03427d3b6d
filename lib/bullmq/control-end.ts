/**
 * The end of what the control channel keeps for a job (see control-store.ts). What a run leaves
 * as it ends: the job's hash deleted when the run ends the job, some of its fields cleared when it
 * ends one BullMQ attempt. Either is done only by the run that holds the job's lock, or for a job
 * that has finished or is gone: a run whose lock expired (a stalled event loop, Redis away) goes
 * on until its task ends, while the job is back in the queue or held by another worker, and what
 * the channel keeps is then the job's next run's (a cancel, an answer given meanwhile). And the
 * hashes that jobs ended otherwise left behind, which workers delete as they look at the index.
 */
import { controlKeys, JOB_STATE, type JobInstance, type ToolQueue } from './control-store.js';
import { scriptClient } from './redis-script.js';

/**
 * Lua: true when a run may act for its job's end on what the channel keeps for the job: the run
 * holds the job's lock (`lock` holds its `token`; '' for none known), or the job (its hash `job`,
 * of timestamp `ts`) is live no more (finished, or gone). Needs {@link JOB_STATE}.
 */
const HOLDS = `
local function holdsOrEnded(job, ts, lock, token)
  if jobState(job, ts) ~= 'live' then return true end
  return token ~= '' and redis.call('GET', lock) == token
end`;

/** The keys and arguments that {@link HOLDS} checks, as the scripts here take them. */
function held(queue: ToolQueue, job: JobInstance, token: string | undefined): { keys: string[]; args: string[] } {
  const keys = controlKeys(queue);
  return { keys: [keys.hash(job), keys.lock(job), keys.job(job)], args: [token ?? '', String(job.timestamp)] };
}

/** Lua: deletes the control hash `hash` and its `member` of the index `index`. */
const DROP = `
local function drop(hash, index, member)
  redis.call('ZREM', index, member)
  return redis.call('DEL', hash)
end`;

const FINISH = 'mcpTaskClientControlFinish';
/**
 * KEYS[1] the job's control hash, KEYS[2] the job's lock, KEYS[3] the job's hash, KEYS[4] the
 * index; ARGV[1] the lock's token the run holds ('' for none known), ARGV[2] the job's timestamp,
 * ARGV[3] the hash's member in the index: deletes the hash (and its member) when the run holds the
 * job, or the job has finished or gone (see {@link HOLDS}). Returns 1 when it was deleted, else 0.
 */
const FINISH_LUA = `${JOB_STATE}${HOLDS}${DROP}
if not holdsOrEnded(KEYS[3], ARGV[2], KEYS[2], ARGV[1]) then return 0 end
return drop(KEYS[1], KEYS[4], ARGV[3])`;

/** Deletes what `job` holds on the channel: its run (holding the lock `token`) ended it (see {@link FINISH_LUA}). */
export async function finish(queue: ToolQueue, job: JobInstance, token: string | undefined): Promise<void> {
  const client = await scriptClient(queue, FINISH, 4, FINISH_LUA);
  const { keys, args } = held(queue, job, token);
  const channel = controlKeys(queue);
  await client.runCommand(FINISH, [...keys, channel.index, ...args, channel.member(job)]);
}

const CLEAR = 'mcpTaskClientControlClear';
/**
 * KEYS as {@link FINISH_LUA}'s; ARGV[1] and ARGV[2] too, then the fields: deletes those fields of
 * the hash when the run holds the job, or the job has finished or gone (see {@link HOLDS}).
 * Returns the number of fields deleted.
 */
const CLEAR_LUA = `${JOB_STATE}${HOLDS}
if not holdsOrEnded(KEYS[3], ARGV[2], KEYS[2], ARGV[1]) then return 0 end
return redis.call('HDEL', KEYS[1], unpack(ARGV, 3))`;

/**
 * Deletes `fields` of `job`'s control hash: its run (holding the lock `token`) ended one attempt
 * (see {@link CLEAR_LUA}).
 */
export async function clearFields(
  queue: ToolQueue,
  job: JobInstance,
  token: string | undefined,
  fields: readonly string[],
): Promise<void> {
  if (fields.length === 0) return;
  const client = await scriptClient(queue, CLEAR, 3, CLEAR_LUA);
  const { keys, args } = held(queue, job, token);
  await client.runCommand(CLEAR, [...keys, ...args, ...fields]);
}

/** How often a worker holding jobs looks at the hashes due (see {@link sweep}). */
export const SWEEP_EVERY_MS = 60_000;

/** The most hashes one look checks. */
const SWEEP_BATCH = 100;

/** How long after a look that found its job live a hash is due again. */
const SWEEP_AGAIN_MS = 60 * 60 * 1000;

const SWEEP = 'mcpTaskClientControlSweep';
/**
 * KEYS[1] the index; ARGV[1] now (ms), ARGV[2] when a hash whose job is live is due again, ARGV[3]
 * the most hashes to check, ARGV[4] the prefix of the jobs' keys, ARGV[5] the prefix of the
 * hashes' keys. Checks the hashes due: one whose job has finished or is gone is deleted with its
 * member; one whose job is live is due again at ARGV[2]. Returns the number deleted. The keys come
 * from the index's members, as BullMQ's own scripts make a job's keys from its id: they share the
 * queue's hash slot.
 */
const SWEEP_LUA = `${JOB_STATE}${DROP}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local deleted = 0
for _, member in ipairs(due) do
  local sep = string.find(member, ':', 1, true)
  if sep and jobState(ARGV[4] .. string.sub(member, sep + 1), string.sub(member, 1, sep - 1)) == 'live' then
    redis.call('ZADD', KEYS[1], ARGV[2], member)
  else
    drop(ARGV[5] .. member, KEYS[1], member)
    deleted = deleted + 1
  end
end
return deleted`;

/**
 * Looks at the queue's hashes due (at most {@link SWEEP_BATCH}): deletes those whose job has
 * finished or is gone, which no run of the library ended (removed while it waited, failed by
 * BullMQ's stalled-job check), and looks at the others again an hour later.
 * @returns the number of hashes deleted.
 */
export async function sweep(queue: ToolQueue, now: number): Promise<number> {
  const client = await scriptClient(queue, SWEEP, 1, SWEEP_LUA);
  const keys = controlKeys(queue);
  const deleted: unknown = await client.runCommand(SWEEP, [
    keys.index,
    String(now),
    String(now + SWEEP_AGAIN_MS),
    String(SWEEP_BATCH),
    keys.jobPrefix,
    keys.hashPrefix,
  ]);
  return Number(deleted);
}
