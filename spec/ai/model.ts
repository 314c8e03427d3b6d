/**
 * A scripted language model for the AI SDK agent loop: the AI SDK's own `MockLanguageModelV4`
 * (from `ai/test`), answering the first step with one tool call and the second with text. It keeps
 * every call's prompt, so a test can check what the model was given after the tool ran.
 */
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** One tool call the model makes. */
export interface PlannedCall {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  readonly toolCallId?: string;
}

/**
 * A model that calls `call` (one or more tool calls in its first step), then says `final`. Both
 * `doGenerate` (generateText) and `doStream` (streamText) follow the same script.
 */
export function toolCallingModel(call: PlannedCall | readonly PlannedCall[], final = 'done'): MockLanguageModelV4 {
  const calls = (Array.isArray(call) ? call : [call]) as readonly PlannedCall[];
  const toolCalls = calls.map((c, index) => ({
    type: 'tool-call' as const,
    toolCallId: c.toolCallId ?? `call-${index + 1}`,
    toolName: c.toolName,
    input: JSON.stringify(c.input),
  }));
  const finish = (unified: 'tool-calls' | 'stop') => ({
    type: 'finish' as const,
    finishReason: { unified, raw: undefined },
    usage,
  });
  return new MockLanguageModelV4({
    doGenerate: [
      { content: toolCalls, finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] },
      {
        content: [{ type: 'text', text: final }],
        finishReason: { unified: 'stop', raw: undefined },
        usage,
        warnings: [],
      },
    ],
    doStream: [
      {
        stream: simulateReadableStream({
          chunks: [{ type: 'stream-start' as const, warnings: [] }, ...toolCalls, finish('tool-calls')],
        }),
      },
      {
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start' as const, warnings: [] },
            { type: 'text-start' as const, id: 't1' },
            { type: 'text-delta' as const, id: 't1', delta: final },
            { type: 'text-end' as const, id: 't1' },
            finish('stop'),
          ],
        }),
      },
    ],
  });
}

/** The prompt of the model's `n`-th call (0-based), generate or stream. */
export function promptOf(model: MockLanguageModelV4, n: number): unknown {
  const calls = [...model.doGenerateCalls, ...model.doStreamCalls];
  return calls[n]?.prompt;
}

/** The tool results the model was given in its `n`-th call: `{ toolCallId, output }` per result. */
export function toolResultsIn(
  model: MockLanguageModelV4,
  n: number,
): Array<{ toolCallId: string; toolName: string; output: unknown }> {
  const prompt = promptOf(model, n) as Array<{ role: string; content: unknown }> | undefined;
  const found: Array<{ toolCallId: string; toolName: string; output: unknown }> = [];
  for (const message of prompt ?? []) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as Array<Record<string, unknown>>) {
      if (part.type === 'tool-result')
        found.push({ toolCallId: String(part.toolCallId), toolName: String(part.toolName), output: part.output });
    }
  }
  return found;
}
