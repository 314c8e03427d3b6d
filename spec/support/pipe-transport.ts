/**
 * A client transport over the stdin/stdout of a child process the test spawned itself. Unlike the
 * SDK's StdioClientTransport, closing it only detaches from the pipes: the server process keeps
 * running, so a fresh client can connect to the same process afterwards (resume across
 * connections).
 */
import type { Readable, Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** One connection over a child's pipes. */
export class PipeClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private open = false;

  constructor(private readonly child: { readonly stdin: Writable; readonly stdout: Readable }) {}

  private readonly onData = (chunk: Buffer): void => {
    this.buffer.append(chunk);
    for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) {
      this.onmessage?.(message);
    }
  };

  start(): Promise<void> {
    this.open = true;
    this.child.stdout.on('data', this.onData);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.open) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (this.child.stdin.write(serializeMessage(message))) resolve();
      else this.child.stdin.once('drain', resolve);
    });
  }

  /** Detaches from the pipes; the server process keeps running. */
  close(): Promise<void> {
    if (!this.open) return Promise.resolve();
    this.open = false;
    this.child.stdout.off('data', this.onData);
    this.buffer.clear();
    this.onclose?.();
    return Promise.resolve();
  }
}
