/**
 * The doctor's checks of the MCP 2025-11-25 wire: for each, the rule it reads (an id of
 * docs/spec-rules.md), the rule in a few words, its strength, and what mcp-task-client does about
 * it (see checks.ts).
 */
import { c, type CheckSpec } from '../check-spec.js';

/** Checks of the MCP 2025-11-25 wire. */
export const V2025: Readonly<Record<string, CheckSpec>> = {
  offer: c(
    'R1',
    'MUST',
    'a server that runs tools as tasks declares capabilities.tasks',
    'The library uses this wire only when the server declared tasks; otherwise every call is a plain call.',
  ),
  'caps.toolsCall': c(
    'R4',
    'MUST',
    'tasks.requests.tools.call lists task-augmented tool calls',
    'Without it the library never sends a tool call as a task (R6); tools() reports such tools unavailable.',
    'Tools that declare task support cannot run as tasks.',
  ),
  'caps.cancel': c(
    'R5',
    'MAY',
    'tasks.cancel makes tasks cancellable',
    'Without it the library sends no tasks/cancel: deadlines and aborts end the local wait with remoteCancel "not-supported", and the task runs until its ttl.',
  ),
  'caps.list': c(
    'R5',
    'MAY',
    'tasks.list enables tasks/list',
    'list() and listPage() need it; handles() lists the tasks this client tracks either way.',
  ),
  'tools.taskSupport': c(
    'V29',
    'MUST',
    'execution.taskSupport is forbidden, optional or required',
    'An absent or unknown value is read as forbidden: the tool is called plainly.',
  ),
  'create.result': c(
    'V14',
    'MUST',
    'a task-augmented call is answered with a CreateTaskResult',
    'A plain result to a task request gives an immediate handle (V1, D16); an error reply fails the call.',
  ),
  'create.status': c(
    'V5',
    'MUST',
    'a task starts in working',
    'The library takes whatever status the CreateTaskResult has.',
  ),
  'create.timestamps': c(
    'V9',
    'MUST',
    'createdAt and lastUpdatedAt are ISO 8601 timestamps',
    'Timestamps only order snapshots; equal or unreadable ones never cause a drop (ties go to the later arrival).',
  ),
  'create.ttl': c(
    'V10',
    'MUST',
    'the task reports the ttl it applies, a number or null',
    'A missing or unusable ttl is read as unknown (null): expiry is then told from "not found" only by the error.',
  ),
  'create.pollInterval': c(
    'V13',
    'MAY',
    'a task may suggest a pollInterval, which may change',
    'The library polls at the latest pollInterval (clamped to 100 ms - 1 h); without one it backs off from 500 ms to 5 s.',
  ),
  'ttl.honoured': c(
    'V10',
    'MUST',
    'a task stays readable for the ttl it reports',
    'The library fetches a result as soon as it sees the task end; a task gone earlier settles TaskNotFoundError.',
    'A result not fetched before the server dropped the task is lost.',
  ),
  'notify.sent': c(
    'V21',
    'MAY',
    'status notifications may be sent, for some or all changes',
    'Notifications and polls feed one merge; without notifications the library polls every pollInterval, so a result arrives up to one interval later.',
  ),
  'poll.fast': c(
    'R13',
    'SHOULD',
    'clients poll no faster than pollInterval; servers may rate-limit faster polls',
    'The library polls no faster than the latest pollInterval (a task with a ttl is read at least twice per ttl; a last look precedes a cancel); failed polls are retried with backoff.',
  ),
  'result.blocks': c(
    'V16',
    'MUST',
    'tasks/result on an unfinished task waits until it ends',
    'The library sends tasks/result only for a terminal task, or one blocking request on input_required; an answer before the end is checked with tasks/get.',
    'A result handed out before the task ended may be incomplete.',
  ),
  'result.meta': c(
    'V19',
    'MUST',
    'the tasks/result reply names its task in related-task _meta',
    'Not required (A9): the library knows which task it asked about; a _meta naming another task is refused as malformed.',
  ),
  'result.shape': c(
    'V17',
    'MUST',
    'tasks/result returns what the tool call would have returned',
    'A reply that is not a CallToolResult fails result() with TaskProtocolError.',
    'The result cannot be read.',
  ),
  'cancel.running': c(
    'V24',
    'MUST',
    'a cancel moves the task to cancelled before replying, and returns it',
    'cancel() reports the status the reply gives; a reply that is not cancelled is tracked on to its real end.',
  ),
  'cancel.sticky': c(
    'V6',
    'MUST',
    'a cancelled task stays cancelled',
    'Terminal snapshots are sticky in the library: a later different one is ignored and reported on the error event.',
  ),
  'cancel.twice': c(
    'V23',
    'MUST',
    'cancelling a task that already ended is refused with -32602',
    'After a -32602 to tasks/cancel the library reads the task and reports how it really ended.',
  ),
  'cancel.result': c(
    'A2',
    'MAY',
    'what tasks/result answers for a cancelled task is not defined',
    'The library never sends tasks/result for a cancelled task: result() rejects with TaskCancelledError.',
  ),
  'cancel.completed': c(
    'V23',
    'MUST',
    'cancelling a completed task is refused with -32602',
    'The library reads a task before cancelling it on a deadline or an abort, and after a -32602 reads it again: a finished task keeps its result.',
  ),
  'cancel.completed.status': c(
    'V5',
    'MUST',
    'a terminal status never changes',
    'The library keeps the first terminal snapshot it saw and ignores later ones.',
    'Other clients of the server see the task cancelled.',
  ),
  'cancel.completed.result': c(
    'V15',
    'MUST',
    'a terminal task keeps returning its result',
    'The library fetches a result once and keeps it; a result it had not fetched yet is lost.',
    'A result not fetched before the cancel is lost.',
  ),
  'unknown.id': c(
    'V26',
    'MUST',
    'an unknown task id is refused with -32602',
    'The library reads only -32602 (and the -32002 "not found" of Rust servers, D19) as "the task is gone" (TaskExpiredError or TaskNotFoundError); any other code counts as a failed request, retried and then reported as TaskRpcError.',
  ),
  'list.paging': c(
    'V22',
    'MUST',
    'nextCursor is sent only while more tasks remain',
    'list() follows nextCursor as long as the server gives one; an endless listing never ends for the caller either.',
    'A caller of list() that reads to the end waits forever.',
  ),
  'list.complete': c(
    'V22',
    'MUST',
    'every task readable with tasks/get is listed',
    'list() returns what the server lists; handles() lists the tasks this client tracks.',
  ),
  'list.badCursor': c(
    'V26',
    'MUST',
    'an unknown list cursor is refused with -32602',
    'The library passes cursors back unchanged (R23); a refused cursor rejects listPage() with TaskRpcError.',
  ),
  'fail.status': c(
    'V18',
    'SHOULD',
    'a tool that fails (isError or an error) ends its task failed',
    'result() rejects with TaskFailedError for a failed task and for a completed one whose result has isError.',
  ),
  'fail.message': c(
    'V18',
    'SHOULD',
    'a failed task says why in statusMessage',
    'TaskFailedError carries the statusMessage when there is one, besides the result or error.',
  ),
  'fail.result': c(
    'V17',
    'MUST',
    "a failed task's tasks/result is its isError result or its JSON-RPC error",
    'TaskFailedError carries the result or the error; a bare _meta is never taken for success (D6), and the reason is then only in statusMessage.',
    'The failure detail is lost.',
  ),
  'input.status': c(
    'V7',
    'SHOULD',
    'a task that needs input is input_required while it asks',
    'The library answers a question whatever the status; it sends its blocking tasks/result on input_required.',
  ),
  'input.tagged': c(
    'V7',
    'MUST',
    'input requests carry related-task _meta with the task id',
    'An untagged question goes to the only task call in flight that could have asked, its answer untagged (R31); with several, nobody answers it (D14).',
    'With several calls in flight, an untagged question cannot be answered.',
  ),
  'input.resumes': c(
    'V7',
    'SHOULD',
    'once answered, the task leaves input_required',
    'The library keeps polling; the handle follows whatever status comes next.',
  ),
  'input.unanswered': c(
    'A3',
    'MAY',
    'what happens to an unanswered question when its task is cancelled is not defined',
    'The library aborts the callback of a question whose task ended; a deadline or abort cancels the task.',
  ),
  'expiry.read': c(
    'V12',
    'MAY',
    'after its ttl a task may be forgotten (then -32602) or kept',
    'A -32602 after the ttl settles TaskExpiredError; another code is reported as TaskRpcError.',
  ),
};
