/**
 * The `mcp-task` command line: commands, options and exit codes (see docs/cli.md). `main.ts`
 * runs it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { TaskOptionError } from 'mcp-task-client';
import { UsageError } from './args.js';
import { callCommand } from './commands/call.js';
import { doctorCommand } from './commands/doctor.js';
import { cancelCommand, getCommand, listCommand, resultCommand, toolsCommand } from './commands/inspect.js';
import { watchCommand } from './commands/watch.js';
import { EXIT, describeError } from './exit.js';
import { terminalSafe } from './sanitize.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Adds the options every command takes. */
function common(command: Command): Command {
  return command
    .option('--stdio <command>', 'start a stdio server with this command line')
    .option('--url <url>', 'connect to a Streamable HTTP server')
    .option('--header <name:value>', 'HTTP header for --url (repeatable), e.g. "Authorization: Bearer …"', collect)
    .option('--session <id>', 'join this HTTP session instead of starting one (--url only)')
    .option('--json', 'JSON lines on stdout (the default when stdout is not a terminal)')
    .option('-q, --quiet', 'print only the result')
    .option('--wire <wire>', 'task wire: auto (default), 2025-11-25 (or 2025), io.modelcontextprotocol/tasks (or ext)')
    .option(
      '--connect-timeout <duration>',
      'give up connecting after this long, and an HTTP server no request reaches for this long (default 30s; 0: no limit)',
    );
}

/** Adds the options of commands that wait for a task. */
function waiting(command: Command): Command {
  return command
    .option(
      '--timeout <duration>',
      'end the run within this long, cancelling the task: 500ms, 30s, 5m; a bare number is seconds',
    )
    .option('--answer <json>', 'answer for the next question of the task (repeatable, used in order)', collect)
    .option('--answers <file>', 'answers for the questions, a JSON array or one JSON value per line (- reads stdin)');
}

/**
 * The version of a package, read through its own `package.json` export (`unknown` when it cannot be
 * read): `mcp-task` resolves to this package itself, in the repository and where it is installed.
 */
function versionOf(name: 'mcp-task' | 'mcp-task-client'): string {
  try {
    const pkg = createRequire(import.meta.url)(`${name}/package.json`) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Where a guide of the library's docs/ is on this machine: the library's package ships docs/, so an
 * installed `mcp-task` names a file that exists (a bare `docs/cli.md` exists only in a clone).
 * Falls back to the path in the repository when the package cannot be resolved.
 */
function guide(file: 'cli.md' | 'doctor.md'): string {
  try {
    const manifest = createRequire(import.meta.url).resolve('mcp-task-client/package.json');
    return join(dirname(manifest), 'docs', file);
  } catch {
    return `docs/${file} in the mcp-task-client repository`;
  }
}

/** Builds the program; each action stores its exit code in `exit.code`. */
export function program(exit: { code: number }): Command {
  // The CLI's version and the library's it runs on (two packages, released apart); a copy laid
  // out without its package.json still runs.
  const version = `${versionOf('mcp-task')} (mcp-task-client ${versionOf('mcp-task-client')})`;
  const root = new Command('mcp-task')
    .description(
      'Call, watch, answer and cancel MCP tasks, and probe a task server (doctor). Without --stdio or --url, runs against the bundled example server.',
    )
    .version(version)
    .showHelpAfterError('(run mcp-task help for usage)')
    .addHelpText(
      'after',
      `\nExit codes: 0 completed, 1 failed, 2 usage error, 124 timeout, 130 cancelled (141 stdout closed, 143 SIGTERM).\nDocumentation: ${guide('cli.md')}`,
    )
    .exitOverride();

  const run = (action: () => Promise<number>) => async () => {
    exit.code = await action();
  };

  waiting(common(root.command('call')))
    .description('call a tool as a task and follow it to the end')
    .argument('<tool>', 'the tool to call')
    .argument('[args...]', 'tool arguments as key=value (values are JSON when they parse, else strings)')
    .option(
      '--args <json>',
      'tool arguments as a JSON object (repeatable: merged in order; key=value pairs override it)',
      collect,
    )
    .option('--ttl <duration>', 'ask the server to keep the task this long')
    .option('--save-ref <file>', 'save a reference to the task for `watch --ref`')
    .action((tool: string, args: string[], options: Record<string, unknown>) =>
      run(() => callCommand(tool, args, options))(),
    );

  waiting(common(root.command('watch')))
    .description('resume a task by id or by a saved reference and follow it to the end')
    .argument('[id]', 'the task id')
    .option('--ref <file>', 'a reference saved by `call --save-ref` (joins its HTTP session)')
    .option('--tool <name>', 'the tool name to show for a bare id')
    .action((id: string | undefined, options: Record<string, unknown>) => run(() => watchCommand(id, options))());

  common(root.command('tools'))
    .description('list the tools and their task support')
    .action((options: Record<string, unknown>) => run(() => toolsCommand(options))());

  common(root.command('list'))
    .description('list the tasks the server reports (all pages)')
    .action((options: Record<string, unknown>) => run(() => listCommand(options))());

  for (const [name, description, action] of [
    ['get', "print the task's current status", getCommand],
    ['result', "wait for the task's result and print it", resultCommand],
    ['cancel', 'cancel the task and print its final status', cancelCommand],
  ] as const) {
    const command = common(root.command(name))
      .description(description)
      .argument('[id]', 'the task id')
      .option('--ref <file>', 'a reference saved by `call --save-ref`')
      .option('--tool <name>', 'the tool name to show');
    (name === 'result' ? waiting(command) : command).action(
      (id: string | undefined, options: Record<string, unknown>) => run(() => action(id, options))(),
    );
  }

  root
    .command('doctor')
    .description(
      'probe a task server and report, rule by rule, where it departs from the task specs and how mcp-task-client copes',
    )
    .option('--stdio <command>', 'start a stdio server with this command line (once per session the doctor opens)')
    .option('--url <url>', 'probe a Streamable HTTP server')
    .option('--header <name:value>', 'HTTP header for --url (repeatable), e.g. "Authorization: Bearer …"', collect)
    .option('--tool <name>', 'the task tool the battery runs (default: the first tool that declares task support)')
    .option(
      '--args <key=value|json>',
      'arguments of --tool: key=value or a JSON object (repeatable; default: made up from its input schema)',
      collect,
    )
    .option('--fail-tool <name>', 'a task tool that fails, for the failed-task checks')
    .option('--fail-args <key=value|json>', 'arguments of --fail-tool (repeatable)', collect)
    .option('--input-tool <name>', 'a task tool that asks a question, for the input checks (questions are declined)')
    .option('--input-args <key=value|json>', 'arguments of --input-tool (repeatable)', collect)
    .option('--json', 'the report as one JSON document (the default when stdout is not a terminal)')
    .option('--table', 'the report as a table even when stdout is not a terminal')
    .option('-q, --quiet', 'no progress line on stderr')
    .option(
      '--timeout <duration>',
      'stop after this long, counted from the start (the tasks it started are cancelled; exit 124)',
    )
    .option('--probe-timeout <duration>', 'how long one probe may wait for its tasks (default 60s)')
    .option('--connect-timeout <duration>', 'give up opening a session after this long (default 30s; 0: no limit)')
    .addHelpText(
      'after',
      `\nExit codes: 0 no MUST rule broken, 1 a MUST rule broken (or the server cannot be reached), 2 usage error, 124 --timeout, 130 Ctrl-C (143 SIGTERM, 141 stdout closed).\nDocumentation: ${guide('doctor.md')}`,
    )
    .action((options: Record<string, unknown>) => run(() => doctorCommand(options))());
  return root;
}

/** Runs the CLI with `argv` (without the node and script paths); returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const exit = { code: EXIT.ok as number };
  try {
    await program(exit).parseAsync([...argv], { from: 'user' });
    return exit.code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help asked for (`--help`, `help call`) and `--version` exit 0; help shown instead of a
      // command (none given, `help nosuch`) is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    process.stderr.write(`mcp-task: ${terminalSafe(describeError(error), { multiline: true })}\n`);
    return error instanceof UsageError || error instanceof TaskOptionError ? EXIT.usage : EXIT.failed;
  }
}
