/**
 * What a run leaves on the control channel as it ends (see control-store.ts): the job's hash
 * deleted when the run ends the job, some of its fields cleared when it ends one BullMQ attempt.
 * Either is done only by the run that holds the job's lock, or for a job that has finished or is
 * gone: a run whose lock expired (a stalled event loop, Redis away) goes on until its task ends,
 * while the job is back in the queue or held by another worker, and what the channel keeps is
 * then the job's next run's (a cancel, an answer given meanwhile).
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

const FINISH = 'mcpTaskClientControlFinish';
/**
 * KEYS[1] the job's control hash, KEYS[2] the job's lock, KEYS[3] the job's hash; ARGV[1] the
 * lock's token the run holds ('' for none known), ARGV[2] the job's timestamp: deletes the hash
 * when the run holds the job, or the job has finished or gone (see {@link HOLDS}). Returns 1 when
 * it was deleted, else 0.
 */
const FINISH_LUA = `${JOB_STATE}${HOLDS}
if not holdsOrEnded(KEYS[3], ARGV[2], KEYS[2], ARGV[1]) then return 0 end
return redis.call('DEL', KEYS[1])`;

/** Deletes what `job` holds on the channel: its run (holding the lock `token`) ended it (see {@link FINISH_LUA}). */
export async function finish(queue: ToolQueue, job: JobInstance, token: string | undefined): Promise<void> {
  const client = await scriptClient(queue, FINISH, 3, FINISH_LUA);
  const { keys, args } = held(queue, job, token);
  await client.runCommand(FINISH, [...keys, ...args]);
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
