// The fault-injecting proxy of a chaos run: an HTTPS server in front of the API server that the controllers'
// kubeconfig points to. It terminates TLS with the local cluster's serving certificate (valid for 127.0.0.1,
// signed by the cluster CA, so clients verify it as they would the API server) and re-originates every request
// to the API server with the admin client certificate, streaming bodies both ways (watches included). The
// User-Agent passes through unchanged, so the audit log still names the controller replica that wrote.
//
// Faults (bench/chaos.ts decides when):
//   throttle(ms, fraction)  that fraction of requests is answered 429 Too Many Requests with `Retry-After: 1` and
//                           a Status body, like API priority and fairness rejecting a request
//   resetConnections()      every open client connection is destroyed (TCP reset mid-request, mid-watch)
//   loseCreateAnswers(n)    the next n pod creates (POST …/pods) go through to the API server, and once it has
//                           answered, every client connection is cut instead (as resetConnections): the pod exists,
//                           the client cannot know, and its watches are down, so its cache does not show the pod yet
//   delayRequests(ms)       every request but a watch or a Lease call is held that long before it is forwarded, and
//                           dropped if the client closed its connection meanwhile (bench/fencing.ts: a slow path for
//                           the controller's writes while its lease renewals go through, so it keeps believing it leads)
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ProxyTls {
  /** serving certificate and key (the API server's) */
  readonly serverCert: Buffer;
  readonly serverKey: Buffer;
  /** CA that verifies the API server, client certificate and key presented to it */
  readonly ca: Buffer;
  readonly clientCert: Buffer;
  readonly clientKey: Buffer;
}

export interface ProxyStats {
  requests: number;
  throttled: number;
  resets: number;
  upstreamErrors: number;
  /** pod creates applied by the API server whose answer the client never got (loseCreateAnswers) */
  answersLost: number;
  /** delayed requests whose client went away before they were forwarded (delayRequests) */
  dropped: number;
}

export interface FaultProxy {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  readonly stats: ProxyStats;
  throttle(ms: number, fraction: number): void;
  resetConnections(): void;
  loseCreateAnswers(n: number): void;
  delayRequests(ms: number): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

function copyHeaders(h: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/** Starts the proxy on a free port of 127.0.0.1. `random` decides which requests a throttle hits (seeded by the caller). */
export async function startFaultProxy(upstream: string, tls: ProxyTls, random: () => number): Promise<FaultProxy> {
  const target = new URL(upstream);
  const newAgent = (): https.Agent => new https.Agent({ keepAlive: true, maxSockets: 500, ca: tls.ca, cert: tls.clientCert, key: tls.clientKey });
  let agent = newAgent();
  const sockets = new Set<Socket>();
  const stats: ProxyStats = { requests: 0, throttled: 0, resets: 0, upstreamErrors: 0, answersLost: 0, dropped: 0 };
  let answersToLose = 0;
  let delayMs = 0;
  let throttleUntil = 0;
  let throttleFraction = 0;

  const resetConnections = (): void => {
    for (const s of sockets) {
      stats.resets++;
      s.destroy();
    }
    // upstream connections too; a destroyed agent is not reused
    agent.destroy();
    agent = newAgent();
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    stats.requests++;
    if (Date.now() < throttleUntil && random() < throttleFraction) {
      stats.throttled++;
      const body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        reason: 'TooManyRequests',
        code: 429,
        message: 'Too many requests, please try again later.',
        details: { retryAfterSeconds: 1 },
      });
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      req.resume();
      return;
    }
    const url = new URL(req.url ?? '/', 'https://x');
    if (delayMs > 0 && url.searchParams.get('watch') !== 'true' && !url.pathname.includes('/leases')) {
      let gone = false;
      res.on('close', () => {
        gone = true;
      });
      setTimeout(() => {
        if (gone) stats.dropped++;
        else forward(req, res);
      }, delayMs);
      return;
    }
    forward(req, res);
  };

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const lose = answersToLose > 0 && req.method === 'POST' && /\/pods$/.test(new URL(req.url ?? '/', 'https://x').pathname);
    if (lose) answersToLose--;
    const up = https.request(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: copyHeaders(req.headers),
        agent,
      },
      (upRes) => {
        if (lose) {
          // read the whole answer (the create is applied), then cut the client off without a byte of it
          upRes.resume();
          upRes.on('end', () => {
            stats.answersLost++;
            resetConnections();
          });
          return;
        }
        res.writeHead(upRes.statusCode ?? 502, copyHeaders(upRes.headers));
        res.flushHeaders(); // a watch's headers reach the client before its first event
        upRes.on('data', (chunk: Buffer) => res.write(chunk));
        upRes.on('end', () => res.end());
        // the API server died mid-response (a watch when it restarts): the client must see a broken stream, not a clean end
        upRes.on('error', () => res.destroy());
        upRes.on('aborted', () => res.destroy());
        // a socket closed before the response completed, without an error event: still a broken stream (without this
        // a watch open when the API server was killed stayed silently open, and the client only noticed after its
        // --watch-idle-timeout of 90 s)
        upRes.on('close', () => {
          if (!upRes.complete) res.destroy();
        });
      },
    );
    up.on('error', () => {
      stats.upstreamErrors++;
      if (res.headersSent) res.destroy();
      else {
        // connection refused while the API server restarts: what a client sees from a load balancer
        res.writeHead(503, { 'Content-Type': 'text/plain', 'Retry-After': '1' });
        res.end('the API server is unavailable (chaos proxy)\n');
      }
    });
    res.on('close', () => up.destroy());
    req.pipe(up);
  };

  const server = https.createServer({ cert: tls.serverCert, key: tls.serverKey, keepAliveTimeout: 60_000 }, handle);
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('the chaos proxy has no port');
  return {
    url: `https://127.0.0.1:${String(addr.port)}`,
    stats,
    throttle(ms, fraction) {
      throttleUntil = Date.now() + ms;
      throttleFraction = fraction;
    },
    resetConnections,
    loseCreateAnswers(n) {
      answersToLose += n;
    },
    delayRequests(ms) {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
