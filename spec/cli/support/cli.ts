/**
 * Running the real `mcp-task` CLI (cli/src/main.ts, through tsx) in tests: in a pseudo-terminal
 * (@lydell/node-pty, prebuilt binaries) or with plain pipes. The CLI imports the library as a host
 * does, by its package name, so it runs against the built library (dist/): after changing lib/,
 * `npm run build` before running these suites (`npm test` builds first).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pty from '@lydell/node-pty';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The CLI's entry, run from source. */
export const MAIN = fileURLToPath(new URL('../../../cli/src/main.ts', import.meta.url));

/** `--stdio` value that starts the example server from source. */
export const STDIO_SERVER = `${process.execPath} --import tsx ${fileURLToPath(new URL('../../../examples/server.ts', import.meta.url))}`;

/** `--stdio` value that starts the tasks-extension example server (`examples/ext-server.ts`, 2026-07-28 only). */
export const EXT_STDIO_SERVER = `${process.execPath} --import tsx ${fileURLToPath(new URL('../../../examples/ext-server.ts', import.meta.url))}`;

/** `--stdio` value of the scripted fault server (spec/fixtures/cli-faulty-server.ts; `SCRIPT` in its environment picks the fault). */
export const FAULTY_SERVER = `${process.execPath} --import tsx ${fileURLToPath(new URL('../../fixtures/cli-faulty-server.ts', import.meta.url))}`;

/** The extension wire's name, as `--wire` and the JSON lines spell it. */
export const EXT_WIRE = 'io.modelcontextprotocol/tasks';

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\x1b[=>78]/g;

/** `text` without terminal escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Keys, as a terminal sends them. */
export const KEY = {
  enter: '\r',
  down: '\x1b[B',
  up: '\x1b[A',
  backspace: '\x7f',
  ctrlC: '\x03',
  escape: '\x1b',
} as const;

/** The CLI running in a pseudo-terminal. */
export class PtyRun {
  /** Everything written to the terminal so far (with escape sequences). */
  raw = '';
  readonly exited: Promise<{ exitCode: number; signal?: number | undefined }>;
  private readonly process: pty.IPty;
  private waiters: (() => void)[] = [];

  constructor(args: readonly string[], env: Record<string, string> = {}) {
    const base: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) base[key] = value;
    delete base.NO_COLOR;
    this.process = pty.spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      name: 'xterm-256color',
      cols: 120,
      rows: 40,
      cwd: ROOT,
      env: { ...base, TERM: 'xterm-256color', ...env },
    });
    this.process.onData((data) => {
      this.raw += data;
      for (const wake of this.waiters) wake();
    });
    this.exited = new Promise((resolve) => this.process.onExit(resolve));
  }

  /** The text printed so far, without escape sequences. */
  get text(): string {
    return stripAnsi(this.raw);
  }

  /** Types `keys`. */
  type(keys: string): void {
    this.process.write(keys);
  }

  /**
   * Waits until the text printed after offset `from` matches `pattern`.
   * @returns the offset (in the stripped text) just after the match.
   */
  async waitFor(pattern: RegExp | string, timeoutMs = 15_000, from = 0): Promise<number> {
    const find = (): number | undefined => {
      const text = this.text.slice(from);
      if (typeof pattern === 'string') {
        const at = text.indexOf(pattern);
        return at < 0 ? undefined : from + at + pattern.length;
      }
      const match = pattern.exec(text);
      return match === null ? undefined : from + match.index + match[0].length;
    };
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`Timed out waiting for ${String(pattern)}; the terminal shows:\n${this.text.slice(-2_000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 250));
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.push(done);
      });
      this.waiters = [];
    }
  }

  /** Kills the CLI if it still runs. */
  kill(): void {
    try {
      this.process.kill();
    } catch {
      // already exited
    }
  }
}

/** The result of a CLI run with pipes. */
export interface PipeResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A CLI process with pipes (no terminal). */
export interface PipeRun {
  readonly pid: number | undefined;
  /** Output so far. */
  stdout(): string;
  /** Diagnostics so far. */
  stderr(): string;
  readonly done: Promise<PipeResult>;
  kill(signal: NodeJS.Signals): void;
  /** Sends `signal` to the CLI's whole process group (with `group`), its stdio server included. */
  killGroup(signal: NodeJS.Signals): void;
  /** Closes the reading end of the CLI's stdout, as `| head -1` does once it has its line. */
  closeStdout(): void;
}

/**
 * Starts the CLI with pipes for stdin, stdout and stderr. `nodeArgs` go to its Node process
 * (e.g. `--import ./spec/fixtures/hide-sdk.ts`), not to a server it starts. With `group`, the CLI
 * leads a process group of its own (as a job in a shell or a CI step), for {@link PipeRun.killGroup}.
 * `input` is written to its stdin before it is closed (`echo … | mcp-task …`).
 */
export function runPiped(
  args: readonly string[],
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
  {
    group = false,
    input,
    inputAfterMs,
    readAfterMs,
  }: {
    group?: boolean;
    input?: string;
    /** A slow writer: `input` is written (and stdin closed) only this long after the start. */
    inputAfterMs?: number;
    /** A slow reader: nothing is read from the CLI's stdout for this long (the pipe fills up). */
    readAfterMs?: number;
  } = {},
): PipeRun {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: group,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  if (inputAfterMs === undefined) child.stdin.end(input);
  else setTimeout(() => child.stdin.end(input), inputAfterMs);
  if (readAfterMs !== undefined) {
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), readAfterMs);
  }
  const done = new Promise<PipeResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return {
    pid: child.pid,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    kill: (signal) => child.kill(signal),
    killGroup: (signal) => {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    },
    closeStdout: () => child.stdout.destroy(),
  };
}

/** Parses JSON lines. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Waits until `check()` is true (polling every 50 ms). */
export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const scratchDirs: string[] = [];

/** A new temporary directory, removed by {@link removeScratch}. */
export function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-task-spec-'));
  scratchDirs.push(dir);
  return dir;
}

/** Removes the directories made by {@link scratch}. */
export function removeScratch(): void {
  for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
