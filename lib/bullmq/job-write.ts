/**
 * Writes to a job's data that must not undo another run's: the `calling` mark, the task's
 * reference, and forgetting a task (one lost by the server, or one that failed and is retried).
 * A worker whose lock expired (a stalled event loop, Redis away) still runs the job while another
 * worker has taken it; BullMQ's `updateData` checks neither the lock nor what is stored, so a
 * write built from a copy read earlier would erase that worker's mark or reference. Here one
 * script checks the stored data and writes in one step.
 */
import type { ToolQueue } from './control.js';
import { scriptClient } from './redis-script.js';
import { atMost } from './timer.js';
import type { ToolJobData } from './types.js';

const SCRIPT = 'mcpTaskClientJobWrite';
/**
 * KEYS[1] the job's hash; ARGV[1] the new data (JSON), ARGV[2] 'mark', 'reference' or 'forget',
 * ARGV[3] for a mark: the `calling.at` the run expects stored ('' for none); for a reference or a
 * forget: the taskId. A mark is refused when a task is stored or the stored mark is not the
 * expected one; a reference is refused when another task is stored; a forget is refused when
 * another task is stored, or none and a mark (another run is calling). The data is decoded only
 * to look: what is written is the caller's JSON. Returns { 'ok' }, { 'gone' } (no job, or one
 * that finished: nobody reads its data for a task any more), or { 'refused', stored data }.
 */
const LUA = `
local raw = redis.call('HGET', KEYS[1], 'data')
if not raw then return {'gone'} end
if redis.call('HEXISTS', KEYS[1], 'finishedOn') == 1 then return {'gone'} end
local ok, stored = pcall(cjson.decode, raw)
if not ok or type(stored) ~= 'table' then stored = {} end
local task = stored['task']
if type(task) ~= 'table' then task = nil end
if ARGV[2] == 'mark' then
  local calling = stored['calling']
  local at = nil
  if type(calling) == 'table' and type(calling['at']) == 'number' then at = calling['at'] end
  if task ~= nil or at ~= tonumber(ARGV[3]) then return {'refused', raw} end
elseif task ~= nil then
  local reference = task['reference']
  if type(reference) ~= 'table' or reference['taskId'] ~= ARGV[3] then return {'refused', raw} end
elseif ARGV[2] == 'forget' and type(stored['calling']) == 'table' then
  return {'refused', raw}
end
redis.call('HSET', KEYS[1], 'data', ARGV[1])
return {'ok'}`;

/**
 * What a guarded write found: written, refused (with the data stored now, as read), or `gone`: the
 * job was removed or has finished (completed or failed), and nothing was written.
 */
export type JobWrite =
  { readonly kind: 'ok' } | { readonly kind: 'refused'; readonly stored: unknown } | { readonly kind: 'gone' };

/** What a guarded write checks: see {@link writeJobData}. */
export type JobWriteGuard =
  { readonly mark: number | undefined } | { readonly taskId: string } | { readonly forget: string };

/**
 * Whether the lock of job `jobId` on `queue` is `token` (BullMQ keeps it at the job's key and
 * `:lock`): the worker that runs the job with that token still holds it, and no other worker took it
 * after that lock expired. False when another token (or none) is stored, and when the lock cannot
 * be read within `withinMs` (Redis away): the job's state cannot be recorded either then.
 */
export async function holdsLock(queue: ToolQueue, jobId: string, token: string, withinMs: number): Promise<boolean> {
  const read = (async () => {
    const client = await queue.getBackend().client;
    return (await client.get(`${queue.toKey(jobId)}:lock`)) === token;
  })().catch(() => false);
  return atMost(read, withinMs, false);
}

/**
 * Writes `data` to job `jobId` of `queue` unless the stored data says another run got there
 * first: for a `mark`, when a task is stored or a `calling` mark other than `expectedMark` (the
 * one this run read, its own or one it outwaited); for a `reference` (`taskId`), when another
 * task is stored; to `forget` a task (`data` without it), when another task is stored, or none
 * and a `calling` mark (another run forgot it first and is calling the tool again). Nothing is
 * written to a job that was removed or has finished: `gone`.
 * @throws the Redis client's error when the script could not be run or its reply was lost (the
 *   write may have been made: it is idempotent, so it can be made again).
 */
export async function writeJobData(
  queue: ToolQueue,
  jobId: string,
  data: ToolJobData,
  guard: JobWriteGuard,
): Promise<JobWrite> {
  const client = await scriptClient(queue, SCRIPT, 1, LUA);
  const [mode, value] =
    'forget' in guard
      ? ['forget', guard.forget]
      : 'taskId' in guard
        ? ['reference', guard.taskId]
        : ['mark', guard.mark === undefined ? '' : String(guard.mark)];
  const [kind, stored] = (await client.runCommand(SCRIPT, [queue.toKey(jobId), JSON.stringify(data), mode, value])) as [
    string,
    string | undefined,
  ];
  if (kind === 'gone') return { kind: 'gone' };
  if (kind === 'ok') return { kind: 'ok' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored ?? '') as unknown;
  } catch {
    parsed = undefined;
  }
  return { kind: 'refused', stored: parsed };
}
