/**
 * An HTTP proxy on 127.0.0.1 (node:http) in front of a Streamable HTTP server, that cuts the SSE
 * answer of the POSTs a test picks, as a proxy or load balancer that drops a long-lived stream
 * does. Everything else (other POSTs, the GET stream, DELETE) passes through as it is.
 */
import { createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How a picked POST is cut:
 * - `unsent`: answered at once with an event stream that ends empty; the server never sees the
 *   request (a proxy that lost its upstream connection).
 * - `after-first-event`: forwarded; the first event of its answer (a priming event counts) passes,
 *   then the answer ends cleanly and the upstream connection is dropped, so the server sees its
 *   stream close.
 * - `mid-event`: forwarded; the answer ends cleanly halfway through its first event (inside its
 *   data line), and the upstream connection is dropped.
 * - `mid-second-event`: forwarded; the first event passes whole, then the answer ends cleanly
 *   halfway through the second (past its `id:` line when it has one), and the upstream connection
 *   is dropped.
 * - `reset`: forwarded; once the server's answer starts, both connections are destroyed (the
 *   client's read fails, as on a network error).
 * - `primed-unsent`: answered at once with an event stream of one priming event (an id, a
 *   `retry` of 50 ms, no data) that then ends; the server never sees the request. The client may
 *   resume it (a GET with `Last-Event-ID`), as from a server that closes its streams to be polled.
 */
export type Cut = 'unsent' | 'after-first-event' | 'mid-event' | 'mid-second-event' | 'reset' | 'primed-unsent';

/** How the proxy answers GETs that resume a stream (with `Last-Event-ID`), instead of passing them. */
export interface ProxyOptions {
  /** The HTTP status every resuming GET gets (405: no stream offered; 404: the id is unknown here). */
  readonly refuseResume?: number;
  /**
   * How many resuming GETs, the first ones, get an event stream that ends at once with no event
   * (as from a server with nothing new to replay, that closes its streams to be polled).
   */
  readonly emptyResumes?: number;
}

/** A running proxy. */
export interface CuttingProxy {
  readonly url: URL;
  /** Each POSTed JSON-RPC message's method, in the order the proxy got them, `(cut)` after a cut one. */
  readonly methods: readonly string[];
  /** The params of each `notifications/cancelled` that passed. */
  readonly cancelled: ReadonlyArray<Record<string, unknown>>;
  /** The `Last-Event-ID` of each GET that resumed (or tried to resume) a stream, in order. */
  readonly resumes: readonly string[];
  close(): Promise<void>;
}

function bodyOf(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Starts a proxy to `target` (the server's `/mcp` URL). `pick(message, seen)` decides, for each
 * POSTed JSON-RPC message (`seen`: how many of its method came so far, this one included), how to
 * cut its answer, or `undefined` to pass it.
 */
export async function startCuttingProxy(
  target: URL,
  pick: (message: { method?: string; id?: unknown; params?: Record<string, unknown> }, seen: number) => Cut | undefined,
  options: ProxyOptions = {},
): Promise<CuttingProxy> {
  const methods: string[] = [];
  const cancelled: Array<Record<string, unknown>> = [];
  const resumes: string[] = [];
  const seen = new Map<string, number>();
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await bodyOf(req);
    let cut: Cut | undefined;
    if (req.method === 'POST') {
      const message = JSON.parse(body.toString('utf8')) as { method?: string; params?: Record<string, unknown> };
      if (typeof message.method === 'string') {
        const count = (seen.get(message.method) ?? 0) + 1;
        seen.set(message.method, count);
        cut = pick(message, count);
        methods.push(cut === undefined ? message.method : `${message.method} (cut)`);
        if (message.method === 'notifications/cancelled') cancelled.push(message.params ?? {});
      }
    }
    if (cut === 'unsent') {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end();
      return;
    }
    if (cut === 'primed-unsent') {
      res
        .writeHead(200, { 'content-type': 'text/event-stream' })
        .end(`id: primed-${methods.length}\nretry: 50\ndata: \n\n`);
      return;
    }
    const resumeFrom = req.method === 'GET' ? req.headers['last-event-id'] : undefined;
    if (typeof resumeFrom === 'string') {
      resumes.push(resumeFrom);
      if (options.refuseResume !== undefined) {
        res.writeHead(options.refuseResume).end();
        return;
      }
      if (resumes.length <= (options.emptyResumes ?? 0)) {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end();
        return;
      }
    }
    const upstream = forward(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        if (cut === undefined) {
          answer.pipe(res);
          return;
        }
        if (cut === 'reset') {
          res.destroy();
          upstream.destroy();
          return;
        }
        let text = '';
        answer.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          const end = text.indexOf('\n\n');
          if (end < 0 || res.writableEnded) return;
          if (cut === 'mid-second-event') {
            const second = text.indexOf('\n\n', end + 2);
            if (second < 0) return;
            const data = text.indexOf('data:', end + 2);
            // Inside the second event's data line, which comes after its id.
            res.end(text.slice(0, data + 5 + Math.floor((second - data - 5) / 2)));
          } else res.end(cut === 'mid-event' ? text.slice(0, Math.floor(end / 2)) : text.slice(0, end + 2));
          upstream.destroy();
        });
      },
    );
    upstream.on('error', () => res.destroy());
    // The client left (a stream it closed): so does the upstream request.
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  };
  const server = createServer((req, res) => {
    serve(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    methods,
    cancelled,
    resumes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
