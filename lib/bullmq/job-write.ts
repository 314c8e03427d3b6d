/**
 * Writes to a job's data that must not undo another run's: the `calling` mark and the task's
 * reference. A worker whose lock expired (a stalled event loop, Redis away) still runs the job
 * while another worker has taken it; BullMQ's `updateData` checks neither the lock nor what is
 * stored, so a write built from a copy read earlier would erase that worker's mark or reference.
 * Here one script checks the stored data and writes in one step.
 */
import type { ToolQueue } from './control.js';
import { scriptClient } from './redis-script.js';
import type { ToolJobData } from './types.js';

const SCRIPT = 'mcpTaskClientJobWrite';
/**
 * KEYS[1] the job's hash; ARGV[1] the new data (JSON), ARGV[2] 'mark' or 'reference', ARGV[3]
 * for a mark: the `calling.at` the run expects stored ('' for none); for a reference: its taskId.
 * A mark is refused when a task is stored or the stored mark is not the expected one; a reference
 * is refused when another task is stored. The data is decoded only to look: what is written is
 * the caller's JSON. Returns { 'ok' }, { 'gone' } (no job), or { 'refused', stored data }.
 */
const LUA = `
local raw = redis.call('HGET', KEYS[1], 'data')
if not raw then return {'gone'} end
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
end
redis.call('HSET', KEYS[1], 'data', ARGV[1])
return {'ok'}`;

/** What a guarded write found: written, refused (with the data stored now, as read), or no job. */
export type JobWrite = { readonly kind: 'ok' } | { readonly kind: 'refused'; readonly stored: unknown };

/**
 * Writes `data` to job `jobId` of `queue` unless the stored data says another run got there
 * first: for a `mark`, when a task is stored or a `calling` mark other than `expectedMark` (the
 * one this run read, its own or one it outwaited); for a `reference` (`taskId`), when another
 * task is stored.
 * @throws Error when the job is gone (removed).
 */
export async function writeJobData(
  queue: ToolQueue,
  jobId: string,
  data: ToolJobData,
  guard: { readonly mark: number | undefined } | { readonly taskId: string },
): Promise<JobWrite> {
  const client = await scriptClient(queue, SCRIPT, 1, LUA);
  const [kind, stored] = (await client.runCommand(SCRIPT, [
    queue.toKey(jobId),
    JSON.stringify(data),
    'taskId' in guard ? 'reference' : 'mark',
    'taskId' in guard ? guard.taskId : guard.mark === undefined ? '' : String(guard.mark),
  ])) as [string, string | undefined];
  if (kind === 'gone') throw new Error(`Missing key for job ${jobId}: the job is gone`);
  if (kind === 'ok') return { kind: 'ok' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored ?? '') as unknown;
  } catch {
    parsed = undefined;
  }
  return { kind: 'refused', stored: parsed };
}
