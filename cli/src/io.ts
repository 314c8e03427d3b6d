/**
 * The process streams a command reads and writes: this process's own, or a test's when it runs
 * commands in process.
 */

/** The process streams, so tests can run commands in process. */
export interface Io {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly env: NodeJS.ProcessEnv;
}

/** The streams of this process: what a command uses unless a test gives its own. */
export const defaultIo = (): Io => ({
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
