/**
 * Runs a real AI SDK agent loop (`streamText`, two steps: the scripted model's tool call, then its
 * answer) with task tools, and sorts what the stream carried: the preliminary outputs of the tool
 * call in order, its final output or error, and whether the stream was aborted.
 */
import { isStepCount, streamText, type TimeoutConfiguration, type ToolSet } from 'ai';
import type { MockLanguageModelV4 } from 'ai/test';
import { isTaskToolOutput, type TaskToolOutput, type TaskToolStatus } from '../../lib/ai.js';
import { within } from '../helpers.js';

/** What one streamed agent run produced. */
export interface StreamedRun {
  /** Every preliminary output of the tool calls, in arrival order. */
  readonly preliminary: TaskToolOutput[];
  /** The final (non-preliminary) outputs, by tool call id. */
  readonly results: Map<string, unknown>;
  /** The tool errors, by tool call id. */
  readonly errors: Map<string, unknown>;
  /** Whether the stream ended with an `abort` part. */
  readonly aborted: boolean;
  /** The text of the last step. */
  readonly text: string;
  /** The stream's part types, in order. */
  readonly parts: string[];
}

/** Options of {@link streamAgent}. */
export interface StreamAgentOptions {
  /** Aborts the run. */
  readonly abortSignal?: AbortSignal;
  /** Called with each preliminary output as it arrives (e.g. to abort at a given point). */
  readonly onPreliminary?: (output: TaskToolOutput) => void;
  /** Bound of the whole run, in ms. @defaultValue 15000 */
  readonly withinMs?: number;
  /** The AI SDK's own timeouts (`streamText({ timeout })`), e.g. `{ toolMs: 300 }`. */
  readonly timeout?: TimeoutConfiguration<ToolSet>;
}

/** Runs `streamText` with `model` and `tools` to its end and collects what it streamed. */
export async function streamAgent(
  model: MockLanguageModelV4,
  tools: ToolSet,
  options: StreamAgentOptions = {},
): Promise<StreamedRun> {
  const result = streamText({
    model,
    tools,
    prompt: 'Run the tool, then answer.',
    stopWhen: isStepCount(3),
    ...(options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal }),
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
  const preliminary: TaskToolOutput[] = [];
  const results = new Map<string, unknown>();
  const errors = new Map<string, unknown>();
  const parts: string[] = [];
  let aborted = false;
  let text = '';
  const consume = async (): Promise<void> => {
    for await (const part of result.stream) {
      parts.push(part.type);
      if (part.type === 'tool-result' && part.preliminary === true) {
        if (!isTaskToolOutput(part.output)) throw new Error(`not a task tool output: ${JSON.stringify(part.output)}`);
        preliminary.push(part.output);
        options.onPreliminary?.(part.output);
      } else if (part.type === 'tool-result') results.set(part.toolCallId, part.output);
      else if (part.type === 'tool-error') errors.set(part.toolCallId, part.error);
      else if (part.type === 'abort') aborted = true;
      else if (part.type === 'text-delta') text += part.text;
    }
  };
  await within(consume(), options.withinMs ?? 15_000, 'the agent run');
  return { preliminary, results, errors, aborted, text, parts };
}

/** The statuses among `outputs` (the preliminary outputs before the final result). */
export function statusesOf(outputs: readonly TaskToolOutput[]): TaskToolStatus[] {
  return outputs.filter((output): output is TaskToolStatus => output.type === 'status');
}

/** True when `expected` appears in `seen` in this order (other items may come between). */
export function inOrder(seen: readonly string[], expected: readonly string[]): boolean {
  let next = 0;
  for (const item of seen) if (item === expected[next]) next += 1;
  return next === expected.length;
}
