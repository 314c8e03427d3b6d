/**
 * What the raw dispatch reads from an SDK client: the structural transport and the per-major
 * access ({@link SdkAccess}) that sdk-v1.ts and sdk-v2.ts implement.
 */
import type { McpTransport } from '../types.js';
import type { Era, JsonObject, SdkMajor, ServerIdentity } from './port.js';

/** The structural transport both SDKs provide. */
export type TransportLike = Pick<McpTransport, 'send' | 'onmessage' | 'onclose' | 'sessionId'>;

/** A transport's own message handler (the SDK's), which the raw dispatch wraps. */
export type MessageHandler = (message: unknown, extra?: unknown) => void;

/** What a request's `send` tells a transport with a stream per request (Streamable HTTP). */
export interface SendOptions {
  /** Aborting it closes the request's stream (2026-07-28 sessions only). */
  readonly requestSignal?: AbortSignal | undefined;
  /** SDK v2: the request's stream ended and will not be resumed (its answer, if any, came before). */
  readonly onRequestStreamEnd?: () => void;
  /** SDK v1: told of each event id the request's stream carries (see stream-ends.ts). */
  readonly onresumptiontoken?: (token: string) => void;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** What a port reads from its SDK client (one implementation per SDK major). */
export interface SdkAccess {
  readonly sdk: SdkMajor;
  transport(): TransportLike | undefined;
  era(): Era;
  protocolVersion(): string | undefined;
  serverCapabilities(): JsonObject | undefined;
  serverIdentity(): ServerIdentity | undefined;
  clientCapabilities(): JsonObject;
  /** The per-request `_meta` envelope of the modern era (with `declare` merged in); `undefined` on legacy. */
  envelope(declare: JsonObject | undefined): JsonObject | undefined;
  /** The HTTP status of a failed transport send, if the error carries one. */
  httpStatus(error: unknown): number | undefined;
  hasOwnHandler(method: string): boolean;
  close(): Promise<void>;
}
