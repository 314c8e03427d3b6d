/**
 * The options of `mcp-task doctor` as commander parses them, and the doctor's options they make:
 * its bounds and the tools it runs (`--tool`, `--fail-tool`, `--input-tool` with their arguments).
 */
import type { DoctorOptions, ToolChoice } from 'mcp-task-client/doctor';
import { MAX_TIMER_MS, UsageError, parseDuration, parseToolArgs } from './args.js';
import { CONNECT_TIMEOUT_MS } from './target.js';

/** The options of `doctor`, as commander parses them. */
export interface DoctorCommandOptions {
  readonly stdio?: string;
  readonly url?: string;
  readonly header?: string[];
  readonly tool?: string;
  readonly args?: string[];
  readonly failTool?: string;
  readonly failArgs?: string[];
  readonly inputTool?: string;
  readonly inputArgs?: string[];
  readonly json?: boolean;
  readonly table?: boolean;
  readonly quiet?: boolean;
  readonly timeout?: string;
  readonly probeTimeout?: string;
  readonly connectTimeout?: string;
}

/** A tool from `--X-tool NAME` and `--X-args …` (key=value pairs or JSON objects). */
function toolChoice(
  name: string | undefined,
  entries: readonly string[] | undefined,
  toolOption: string,
  argsOption: string,
): ToolChoice | undefined {
  if (name === undefined) {
    if (entries !== undefined && entries.length > 0) throw new UsageError(`${argsOption} needs ${toolOption}`);
    return undefined;
  }
  if (name.trim() === '') throw new UsageError(`${toolOption} expects a tool name`);
  if (entries === undefined || entries.length === 0) return { name };
  const json = entries.filter((entry) => entry.trimStart().startsWith('{'));
  const pairs = entries.filter((entry) => !entry.trimStart().startsWith('{'));
  return { name, arguments: parseToolArgs(pairs, json, argsOption) };
}

/** The doctor's options from the command line (bounds, tools). */
export function doctorOptions(options: DoctorCommandOptions): DoctorOptions {
  const probe =
    options.probeTimeout === undefined
      ? undefined
      : parseDuration(options.probeTimeout, '--probe-timeout', MAX_TIMER_MS, false);
  const connect =
    options.connectTimeout === undefined
      ? CONNECT_TIMEOUT_MS
      : parseDuration(options.connectTimeout, '--connect-timeout', MAX_TIMER_MS);
  return {
    tool: toolChoice(options.tool, options.args, '--tool', '--args'),
    failTool: toolChoice(options.failTool, options.failArgs, '--fail-tool', '--fail-args'),
    inputTool: toolChoice(options.inputTool, options.inputArgs, '--input-tool', '--input-args'),
    probeTimeoutMs: probe,
    // 0: no limit, as for the other commands.
    connectTimeoutMs: connect === 0 ? MAX_TIMER_MS : connect,
  };
}
