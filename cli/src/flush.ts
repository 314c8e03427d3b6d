/**
 * Waits until what was written to a stream has left the process. On Linux, Node writes stdout
 * and stderr synchronously to a pipe, a file or a terminal; on macOS a pipe is written
 * asynchronously, and `process.exit()` would drop what a slow reader (`| jq` still starting) had
 * not taken yet, cutting the last JSON line short.
 */

/**
 * Writes `text` to `stream`. Resolves once it was handed to the OS, with `undefined`, or with the
 * write's error (EPIPE: the reader went away). An empty `text` tells the same of the writes before
 * it: its callback runs once they are done, with the error of one that failed.
 */
export function writeOut(stream: NodeJS.WritableStream, text: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    try {
      stream.write(text, (error) => resolve(error ?? undefined));
    } catch (error) {
      resolve(error as NodeJS.ErrnoException);
    }
  });
}

/** Resolves once everything written to `stream` so far was handed to the OS, or the stream failed or closed. */
export async function written(stream: NodeJS.WritableStream & { readonly writableLength?: number }): Promise<void> {
  if (stream.writableLength === undefined || stream.writableLength === 0) return;
  await writeOut(stream, '');
}
