/**
 * Tools of the scripted extension server. A tool's `run` decides, per call, what the server answers
 * (the server, not the client, decides whether a task exists — SEP-2663 "Capability Negotiation"):
 * an immediate result, a JSON-RPC error, an MRTR `input_required` round (core "Multi Round-Trip
 * Requests"), or a task with a {@link TaskScript}.
 */
import type { TaskScript } from './task-store.js';
import { rpcError, textResult, type InputRequests, type InputResponses, type Json, type RpcFailure } from './wire.js';

/** What a tool answers to one `tools/call`. */
export type ToolOutcome =
  | { readonly kind: 'result'; readonly result: Json }
  | { readonly kind: 'error'; readonly error: RpcFailure }
  | { readonly kind: 'input_required'; readonly inputRequests?: InputRequests; readonly requestState?: string }
  | { readonly kind: 'task'; readonly script: TaskScript };

/** Builders for {@link ToolOutcome}s. */
export const outcome = {
  result: (result: Json): ToolOutcome => ({ kind: 'result', result }),
  text: (text: string, extra: Json = {}): ToolOutcome => ({ kind: 'result', result: textResult(text, extra) }),
  error: (code: number, message: string, data?: unknown): ToolOutcome => ({
    kind: 'error',
    error: rpcError(code, message, data),
  }),
  inputRequired: (inputRequests?: InputRequests, requestState?: string): ToolOutcome => ({
    kind: 'input_required',
    ...(inputRequests === undefined ? {} : { inputRequests }),
    ...(requestState === undefined ? {} : { requestState }),
  }),
  task: (script: TaskScript = {}): ToolOutcome => ({ kind: 'task', script }),
};

/** One `tools/call` as a tool sees it. */
export interface ToolCall {
  readonly name: string;
  readonly args: Json;
  /** MRTR retry answers (`params.inputResponses`), if any. */
  readonly inputResponses: InputResponses | undefined;
  /** MRTR retry state (`params.requestState`), if any. */
  readonly requestState: string | undefined;
  /** The request declared the tasks extension in its per-request capabilities. */
  readonly declared: boolean;
  /** The request's `clientCapabilities` (empty in the legacy era). */
  readonly capabilities: Json;
  /** The raw params. */
  readonly params: Json;
}

/** A tool: its `tools/list` entry plus the behaviour. */
export interface ExtTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: Json;
  run(call: ToolCall): ToolOutcome | Promise<ToolOutcome>;
  /**
   * What a client that did not declare the extension gets when `run` wants a task: the script's
   * final result run synchronously (`sync`), or -32021 (`reject`). @default 'sync'
   */
  readonly undeclared?: 'sync' | 'reject';
}

/** A tool that always answers at once. */
export function immediateTool(name: string, answer: Json | ((args: Json) => Json), description?: string): ExtTool {
  return {
    name,
    ...(description === undefined ? {} : { description }),
    run: ({ args }) => outcome.result(typeof answer === 'function' ? answer(args) : answer),
  };
}

/** A tool that creates a task from `script` whenever the client declared the extension. */
export function taskTool(
  name: string,
  script: TaskScript | ((args: Json) => TaskScript),
  options: { description?: string; undeclared?: 'sync' | 'reject'; inputSchema?: Json } = {},
): ExtTool {
  return { name, ...options, run: ({ args }) => outcome.task(typeof script === 'function' ? script(args) : script) };
}

/** Options of {@link mrtrTool}. */
export interface MrtrToolOptions {
  /** The input the first round asks for. */
  readonly inputRequests: InputRequests;
  /** What the complete retry gets (a result, an error or a task), given the answers. */
  readonly then: (answers: InputResponses, call: ToolCall) => ToolOutcome;
  /** Send `requestState` with the round (and require it back). @default true */
  readonly withState?: boolean;
  readonly description?: string;
  readonly undeclared?: 'sync' | 'reject';
}

/**
 * A tool that first answers `input_required` (MRTR) and, once retried with every answer and the
 * exact `requestState`, answers `then(...)` — typically a task, per SEP-2663's composition rule
 * (finish MRTR rounds before creating the task). A retry missing answers gets a new round asking
 * for what is still missing; a forged `requestState` gets -32602.
 */
export function mrtrTool(name: string, options: MrtrToolOptions): ExtTool {
  const issued = new Set<string>();
  let rounds = 0;
  const round = (requests: InputRequests): ToolOutcome => {
    if (options.withState === false) return outcome.inputRequired(requests);
    const state = Buffer.from(JSON.stringify({ tool: name, round: ++rounds })).toString('base64url');
    issued.add(state);
    return outcome.inputRequired(requests, state);
  };
  return {
    name,
    ...(options.description === undefined ? {} : { description: options.description }),
    ...(options.undeclared === undefined ? {} : { undeclared: options.undeclared }),
    run: (call) => {
      if (call.inputResponses === undefined) return round(options.inputRequests);
      if (options.withState !== false && (call.requestState === undefined || !issued.has(call.requestState))) {
        return outcome.error(-32602, 'Invalid or missing requestState');
      }
      const missing = Object.fromEntries(
        Object.entries(options.inputRequests).filter(([key]) => call.inputResponses?.[key] === undefined),
      );
      if (Object.keys(missing).length > 0) return round(missing);
      return options.then(call.inputResponses, call);
    },
  };
}

/** The final outcome of `script` without any waiting: what a non-declaring client gets (`sync`). */
export function syncOutcome(script: TaskScript, args: Json): ToolOutcome {
  for (const step of [...(script.steps ?? [])].reverse()) {
    if (step.error !== undefined) return { kind: 'error', error: step.error };
    if (step.result !== undefined) {
      return outcome.result(
        typeof step.result === 'function' ? step.result({ taskId: '', args, answers: {} }) : step.result,
      );
    }
  }
  return outcome.text('done');
}
