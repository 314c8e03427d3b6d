/**
 * The doctor's checks of the 2026 tasks extension (`io.modelcontextprotocol/tasks`): for each,
 * the rule it reads (an id of docs/spec-rules.md), the rule in a few words, its strength, and what
 * mcp-task-client does about it (see checks.ts).
 */
import { c, type CheckSpec } from '../check-spec.js';

/** Checks of the 2026 tasks extension. */
export const EXT: Readonly<Record<string, CheckSpec>> = {
  offer: c(
    'E26',
    'MUST',
    'a server offers the extension under capabilities.extensions of server/discover',
    'The library uses the extension only when the server lists it on a 2026-07-28 session.',
  ),
  'create.result': c(
    'E2',
    'MUST',
    'a task is answered as a flat CreateTaskResult with resultType "task"',
    'The server decides: a plain result gives an immediate handle; anything else fails the call with TaskProtocolError.',
  ),
  'create.undeclared': c(
    'E2',
    'MUST',
    'no CreateTaskResult to a request that did not declare the extension',
    'The library declares the extension on its own task calls only; a task offered to an undeclared call is refused as malformed.',
    'A task returned to a call that did not ask for one is orphaned on the server.',
  ),
  'create.durable': c(
    'E9',
    'MUST',
    'a task is readable with tasks/get as soon as its id is returned',
    'The first tasks/get waits one poll interval; a -32602 then settles TaskNotFoundError.',
  ),
  'create.fields': c(
    'E28',
    'MUST',
    'a task carries ISO 8601 createdAt and lastUpdatedAt and a ttlMs (a number or null)',
    'A missing ttlMs is read as unknown; timestamps only order snapshots.',
  ),
  'create.pollInterval': c(
    'E14',
    'MAY',
    'pollIntervalMs paces polling and may change',
    'The library polls at the latest pollIntervalMs (clamped to 100 ms - 1 h); without one it backs off from 500 ms to 5 s.',
  ),
  'undeclared.get': c(
    'E11',
    'MUST',
    'a tasks/get that did not declare the extension is refused with -32021 naming it in data.requiredCapabilities.extensions',
    "The library declares the extension on every tasks/* request; -32021 (and the drafts' -32003) whose data names the extension is explained in TaskRpcError messages; a -32021 naming another capability is the server's error, its message naming that capability.",
  ),
  'notify.sent': c(
    'E18',
    'MAY',
    'notifications/tasks may be sent for the task ids of subscriptions/listen',
    'One subscription covers every tracked task; without notifications the library polls every pollIntervalMs.',
  ),
  'listen.reply': c(
    'E36',
    'MUST',
    'a subscriptions/listen is ended, if at all, by an empty result with resultType "complete", never by a task',
    'A listen answered with a task (or another resultType) counts as failed: it is asked for again only when a new task starts, polling keeps every task going, and the task it names is never read or cancelled.',
    'The server runs a task that no request of the client made; it lasts until its ttlMs.',
  ),
  'poll.fast': c(
    'E14',
    'MAY',
    'servers may rate-limit polls faster than pollIntervalMs',
    'The library polls no faster than the latest pollIntervalMs (a task with a ttl is read at least twice per ttl; a last look precedes a cancel); failed polls are retried with backoff.',
  ),
  'result.inline': c(
    'E3',
    'MUST',
    'a completed task carries its result in tasks/get',
    'result() comes from the terminal snapshot; a terminal snapshot without its payload is read again.',
    'The result cannot be read.',
  ),
  'cancel.ack': c(
    'E24',
    'MUST',
    'tasks/cancel is answered with an empty acknowledgement: resultType "complete", no task fields',
    'cancel() resolves after the acknowledgement and one confirming tasks/get; a reply without resultType, or with extra fields, is still taken as the acknowledgement.',
  ),
  'cancel.running': c(
    'E6',
    'MAY',
    'cancelling is cooperative: the task stops when it can, or ends another way',
    'The library tracks a cancelled task to its real end; remoteCancel says "acknowledged" while it still runs.',
  ),
  'cancel.twice': c(
    'E6',
    'MUST',
    'a cancel of a task that already ended is acknowledged with an empty result, like any cancel (an error is for unknown ids only)',
    'The library sends one tasks/cancel per stop and takes an error reply as "cancel failed".',
  ),
  'cancel.completed': c(
    'E27',
    'MUST',
    'a terminal status never changes: a cancel of a finished task leaves it and its result',
    'The library keeps the first terminal snapshot it saw, with its result.',
    'Other clients of the server see the task cancelled, without its result.',
  ),
  'unknown.id': c(
    'E25',
    'MUST',
    'an unknown task id is refused with -32602 (tasks/get: MUST; update, cancel: SHOULD)',
    'The library reads only -32602 as "the task is gone"; any other code counts as a failed request.',
  ),
  'fail.status': c(
    'E15',
    'MUST',
    'failed is only for JSON-RPC errors; an isError result completes the task',
    'result() rejects with TaskFailedError for an isError result and for a failed task with its error.',
  ),
  'fail.result': c(
    'E3',
    'MUST',
    'a failed task carries its JSON-RPC error in tasks/get',
    'A failed snapshot without an error is refused as malformed (TaskProtocolError).',
    'The failure detail is lost.',
  ),
  'input.requests': c(
    'E3',
    'MUST',
    'an input_required task carries its inputRequests in tasks/get',
    'Each key goes to the callbacks once (E4); a snapshot without inputRequests is read again.',
  ),
  'input.update': c(
    'E5',
    'MUST',
    'tasks/update answers input by key and is acknowledged with an empty result (resultType "complete")',
    'Answers go back with tasks/update; a failed send is retried while the key is still listed (E23).',
  ),
  'input.resumes': c(
    'E5',
    'SHOULD',
    'once answered, the task leaves input_required',
    'The library keeps polling; the handle follows whatever status comes next.',
  ),
  'input.unanswered': c(
    'E4',
    'MAY',
    'an unanswered question stays listed under the same key until answered',
    'Each key reaches the callbacks once, however often polls repeat it.',
  ),
  'expiry.read': c(
    'E13',
    'MAY',
    'after its ttlMs a task may be failed, then forgotten',
    'A task still running past its ttlMs (local clock) settles TaskExpiredError after one last read.',
  ),
};
