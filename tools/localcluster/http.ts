// Minimal HTTPS/HTTP requests for health checks and bootstrap objects (no dependency on src/kube).
import http from 'node:http';
import https from 'node:https';

export interface HttpResponse {
  readonly status: number;
  readonly body: string;
}

export interface TlsMaterial {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** skip server verification (component /healthz endpoints with self-signed certificates) */
  readonly insecure?: boolean;
}

export function request(url: string, opts: { method?: string; body?: unknown; tls?: TlsMaterial; timeoutMs?: number } = {}): Promise<HttpResponse> {
  const u = new URL(url);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (payload !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const common = { method: opts.method ?? 'GET', headers, timeout: opts.timeoutMs ?? 5000 };
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    let req: http.ClientRequest;
    if (u.protocol === 'https:') {
      const tls = opts.tls ?? {};
      const tlsOpts: https.RequestOptions = { ...common, rejectUnauthorized: tls.insecure !== true };
      if (tls.ca !== undefined) tlsOpts.ca = tls.ca;
      if (tls.cert !== undefined) tlsOpts.cert = tls.cert;
      if (tls.key !== undefined) tlsOpts.key = tls.key;
      req = https.request(u, tlsOpts, onResponse);
    } else {
      req = http.request(u, common, onResponse);
    }
    req.on('timeout', () => req.destroy(new Error(`timeout after ${String(common.timeout)} ms: ${url}`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
