/**
 * Runs the doctor (`mcp-task-client/doctor`) against a server over stdio and prints its report as
 * a table, with the library alone (the `mcp-task doctor` command of the CLI package does the same,
 * with more options). One session per protocol era is opened (a transport factory), so every task
 * wire the server offers is probed.
 *
 *     npx tsx examples/doctor.ts example      # the bundled example server (SDK McpServer + task store)
 *     npx tsx examples/doctor.ts everything   # @modelcontextprotocol/server-everything
 *     npx tsx examples/doctor.ts ext          # the tasks-extension example server
 *     npx tsx examples/doctor.ts -- node my-server.js --flag   # any stdio server (battery tool found by taskSupport)
 *
 * `--json` prints the report as JSON instead; the exit code is the report's (1 when a MUST rule is
 * broken). `WIDTH` sets the table width (default 110).
 */
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { exitCode, renderReport, reportJson, runDoctor, type DoctorOptions } from '../lib/doctor.js';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = (file: string): string[] => ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url))];

/** The servers this script knows, with the tools that exercise the whole battery. */
const KNOWN: Record<string, { args: string[]; env?: Record<string, string>; options: DoctorOptions }> = {
  example: {
    args: tsx('./server.ts'),
    env: { POLL_INTERVAL: '200' },
    options: {
      tool: { name: 'analyze', arguments: { id: 7, steps: 2, stepMs: 300 } },
      failTool: { name: 'flaky', arguments: { afterMs: 300 } },
      inputTool: { name: 'confirm_delete' },
    },
  },
  everything: {
    args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    options: { inputTool: { name: 'simulate-research-query', arguments: { topic: 'MCP tasks', ambiguous: true } } },
  },
  ext: {
    args: tsx('./ext-server.ts'),
    env: { EXT_STEP_MS: '200' },
    options: {
      tool: { name: 'analyze', arguments: { id: 7 } },
      failTool: { name: 'flaky' },
      inputTool: { name: 'analyze' },
    },
  },
};

const argv = process.argv.slice(2);
const json = argv.includes('--json');
const rest = argv.filter((arg) => arg !== '--json');
const dash = rest.indexOf('--');
const known = KNOWN[rest[0] ?? 'example'];
const command = dash >= 0 ? rest.slice(dash + 1) : [process.execPath, ...(known?.args ?? [])];
if ((dash < 0 && known === undefined) || command.length === 0) {
  console.error(`usage: tsx examples/doctor.ts [${Object.keys(KNOWN).join('|')}] [--json] | -- <command> [args...]`);
  process.exit(2);
}
const [program = process.execPath, ...args] = command;
const env = { ...process.env, ...(dash < 0 ? known?.env : undefined) } as Record<string, string>;

const report = await runDoctor(
  () => new StdioClientTransport({ command: program, args, cwd: root, env, stderr: 'ignore' }),
  {
    ...(dash < 0 ? known?.options : undefined),
    onProgress: ({ wire, probe }) => {
      if (!json) process.stderr.write(`probing ${wire}: ${probe}\n`);
    },
  },
);
process.stdout.write(json ? reportJson(report) : renderReport(report, { width: Number(process.env.WIDTH ?? 110) }));
process.exitCode = exitCode(report);
