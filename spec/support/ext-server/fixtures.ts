/**
 * Ready-made tools named like the fixtures the SEP-2663 conformance scenarios expect
 * (`conformance/src/scenarios/server/tasks/*`), but driven by polls or an injected clock instead of
 * sleeps, so tests stay deterministic:
 *
 * - `greet` — immediate `Hello, {name}!`.
 * - `slow_compute` — `seconds: 0` answers at once; otherwise a task that completes after `polls`
 *   polls (default 2), or after `seconds` of the server clock when `seconds` is given alone.
 * - `failing_job` — a task that ends `completed` with `isError: true`; -32021 when undeclared.
 * - `protocol_error_job` — a task that ends `failed` with a JSON-RPC error.
 * - `confirm_delete` — a task asking one elicitation question, then completing.
 * - `multi_input` — a task asking two questions at once (partial `tasks/update` answers).
 * - `summarize` — a task asking for one sampling completion.
 * - `test_tool_with_task` — an MRTR round (elicitation) on `tools/call`, then a task whose result
 *   echoes the answer; -32021 when undeclared.
 */
import type { TaskScript, TaskStep } from './task-store.js';
import { immediateTool, mrtrTool, outcome, taskTool, type ExtTool } from './tools.js';
import { elicitation, ErrorCode, sampling, textResult, type Json } from './wire.js';

function text(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
/** `true` when the answer to `key` accepted the form and set `field` to true. */
function accepted(answers: Readonly<Record<string, Json>>, key: string, field: string): boolean {
  const answer = answers[key];
  return answer?.action === 'accept' && (answer.content as Json | undefined)?.[field] === true;
}

function slowCompute(args: Json): TaskScript {
  const label = text(args.label, 'job');
  const polls = typeof args.polls === 'number' ? Math.max(1, Math.floor(args.polls)) : undefined;
  const done: TaskStep = { result: textResult(`computed ${label}`, { structuredContent: { label } }) };
  if (polls === undefined && typeof args.seconds === 'number') {
    return {
      statusMessage: `computing ${label}`,
      advance: { everyMs: Math.round(args.seconds * 1000) },
      steps: [done],
    };
  }
  const n = polls ?? 2;
  const working = Array.from({ length: n - 1 }, (_, i): TaskStep => ({
    statusMessage: `computing ${label} (${i + 2}/${n})`,
  }));
  return { statusMessage: `computing ${label} (1/${n})`, steps: [...working, done] };
}

/** The fixture tools (fresh instances; `test_tool_with_task` keeps its issued request states). */
export function fixtureTools(): ExtTool[] {
  return [
    immediateTool(
      'greet',
      (args) => textResult(`Hello, ${text(args.name, 'World')}!`),
      'Greets at once (never a task).',
    ),
    {
      name: 'slow_compute',
      description: 'A computation: immediate for seconds 0, else a task.',
      run: ({ args }) =>
        args.seconds === 0 ? outcome.text(`computed ${text(args.label, 'job')}`) : outcome.task(slowCompute(args)),
    },
    taskTool(
      'failing_job',
      { statusMessage: 'running', steps: [{ result: textResult('job failed: invalid input', { isError: true }) }] },
      { description: 'A task whose tool result is an error (completed + isError).', undeclared: 'reject' },
    ),
    taskTool(
      'protocol_error_job',
      {
        statusMessage: 'running',
        steps: [
          {
            error: { code: ErrorCode.InternalError, message: 'Worker crashed' },
            statusMessage: 'Tool execution failed: worker crashed',
          },
        ],
      },
      { description: 'A task that fails with a JSON-RPC error.' },
    ),
    taskTool(
      'confirm_delete',
      (args) => {
        const file = text(args.filename, 'file.txt');
        return {
          statusMessage: 'preparing',
          steps: [
            {
              inputRequests: { confirm: elicitation(`Delete ${file}?`, { confirm: { type: 'boolean' } }) },
              statusMessage: 'waiting for confirmation',
            },
            {
              result: ({ answers }) =>
                textResult(accepted(answers, 'confirm', 'confirm') ? `deleted ${file}` : `kept ${file}`),
            },
          ],
        };
      },
      { description: 'Asks for confirmation (one elicitation), then completes.' },
    ),
    taskTool(
      'multi_input',
      {
        statusMessage: 'starting',
        steps: [
          {
            inputRequests: {
              name: elicitation('Your name?', { name: { type: 'string' } }),
              confirm: elicitation('Proceed?', { confirm: { type: 'boolean' } }),
            },
          },
          {
            result: ({ answers }) =>
              textResult(`answers: ${Object.keys(answers).sort().join(',')}`, { structuredContent: { answers } }),
          },
        ],
      },
      { description: 'Asks two questions at once.' },
    ),
    taskTool(
      'summarize',
      {
        steps: [
          { inputRequests: { summary: sampling('Summarise the document in one line.') } },
          {
            result: ({ answers }) =>
              textResult(`summary: ${text((answers.summary?.content as Json | undefined)?.text, '?')}`),
          },
        ],
      },
      { description: 'Asks the client model for a summary (sampling).' },
    ),
    mrtrTool('test_tool_with_task', {
      description: 'MRTR round first, then a task echoing the answer.',
      undeclared: 'reject',
      inputRequests: { user_name: elicitation('What is your name?', { name: { type: 'string' } }) },
      then: (answers) => {
        const name = text((answers.user_name?.content as Json | undefined)?.name, 'stranger');
        return outcome.task({ statusMessage: 'greeting', steps: [{ result: textResult(`Hello, ${name}!`) }] });
      },
    }),
  ];
}
