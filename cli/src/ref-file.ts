/**
 * Saved references (`call --save-ref FILE`, `watch --ref FILE`): the library's `TaskReference`
 * plus the server URL. The reference carries the HTTP session id itself: SDK servers keep tasks
 * per session, so a new process joins that session to see the task.
 */
import { randomUUID } from 'node:crypto';
import { accessSync, constants, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { TaskReference } from 'mcp-task-client';
import { UsageError } from './args.js';

/** The content of a saved reference file. */
export interface SavedReference {
  /** File format version. */
  readonly v: 2;
  /** The task's resume reference, as `handle.toJSON()` returned it (with `sessionId` over HTTP). */
  readonly reference: TaskReference;
  /** The server URL, for a `--url` target. */
  readonly url?: string | undefined;
  /**
   * Written by the CLI on its own (to say how to follow a task it left), not asked for with
   * `--save-ref`: removed by whichever `mcp-task` process sees the task end.
   */
  readonly temporary?: true | undefined;
}

/**
 * Writes `saved` to `file`, readable by its owner only (the task id is a secret). With
 * `exclusive`, the file must not exist yet (a temporary file: nothing planted at its path, a
 * symbolic link say, is written through). Otherwise the reference is written to a new file of
 * that mode beside `file`, then renamed over it: an existing file (readable by others, say) never
 * holds the secret, even for a moment, and a run killed while writing leaves the old file whole.
 */
export function writeReference(
  file: string,
  saved: SavedReference,
  options: { readonly exclusive?: boolean } = {},
): void {
  const text = `${JSON.stringify(saved, null, 2)}\n`;
  if (options.exclusive === true) {
    writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
    return;
  }
  const fresh = join(dirname(file), `.${basename(file)}.${randomUUID()}.tmp`);
  try {
    writeFileSync(fresh, text, { mode: 0o600, flag: 'wx' });
    renameSync(fresh, file);
  } catch (error) {
    rmSync(fresh, { force: true });
    throw error;
  }
}

/**
 * Checks, before anything is started, that `file` can be written as a reference file (`--save-ref`):
 * an existing file must be a writable regular file, else its directory must exist and be writable.
 * Writing can still fail later (the disk fills, permissions change): callers handle that too.
 * @throws UsageError naming `option` when it cannot.
 */
export function checkWritable(file: string, option: string): void {
  const fail = (why: string): never => {
    throw new UsageError(`${option}: cannot write ${file}: ${why}`);
  };
  let exists = true;
  try {
    if (!statSync(file).isFile()) fail('not a regular file');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') fail((error as Error).message);
    exists = false;
  }
  const path = exists ? file : dirname(resolve(file));
  try {
    if (!exists && !statSync(path).isDirectory()) fail(`${path} is not a directory`);
    accessSync(path, constants.W_OK);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    fail(code === 'ENOENT' ? `no directory ${path}` : (error as Error).message);
  }
}

/**
 * A new path in the temporary directory for a reference file. The name is random: it tells
 * nothing of the task id, which is a secret, and cannot be guessed in advance.
 */
export function temporaryReferencePath(): string {
  return join(tmpdir(), `mcp-task-${randomUUID()}.json`);
}

/**
 * Reads a reference file written by `call --save-ref` (a bare `TaskReference` is accepted too).
 * A version 1 file kept the session id beside the reference; it is moved into the reference.
 * @throws UsageError when the file cannot be read or is not a reference.
 */
export function readReference(file: string): SavedReference {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--ref: cannot read ${file}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new UsageError(`--ref: ${file} is not a task reference`);
  const value = parsed as { reference?: unknown; url?: unknown; sessionId?: unknown };
  const wrapped = typeof value.reference === 'object' && value.reference !== null;
  const reference = (wrapped ? value.reference : value) as Partial<TaskReference>;
  if (typeof reference.taskId !== 'string' || reference.taskId === '') {
    throw new UsageError(`--ref: ${file} has no taskId`);
  }
  const oldSessionId =
    wrapped && reference.sessionId === undefined && typeof value.sessionId === 'string' ? value.sessionId : undefined;
  return {
    v: 2,
    reference: (oldSessionId === undefined ? reference : { ...reference, sessionId: oldSessionId }) as TaskReference,
    url: typeof value.url === 'string' ? value.url : undefined,
    ...((parsed as { temporary?: unknown }).temporary === true ? { temporary: true as const } : {}),
  };
}

/** Removes a reference file; one already gone is fine. @returns whether a file was removed. */
export function removeReference(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}
