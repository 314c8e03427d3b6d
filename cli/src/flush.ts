/**
 * Waits until what was written to a stream has left the process. On Linux, Node writes stdout
 * and stderr synchronously to a pipe, a file or a terminal; on macOS a pipe is written
 * asynchronously, and `process.exit()` would drop what a slow reader (`| jq` still starting) had
 * not taken yet, cutting the last JSON line short.
 */

/** Resolves once everything written to `stream` so far was handed to the OS, or the stream failed or closed. */
export function written(stream: NodeJS.WritableStream & { readonly writableLength?: number }): Promise<void> {
  if (stream.writableLength === undefined || stream.writableLength === 0) return Promise.resolve();
  // An empty write's callback runs once the writes before it are done (or with the stream's error).
  return new Promise((resolve) => {
    try {
      stream.write('', () => resolve());
    } catch {
      resolve();
    }
  });
}
