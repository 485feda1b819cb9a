// Run as a child process by cert-source.test.ts: which modules does one SecretCertificates.sync load? A resolve hook
// records every specifier before the webhook's modules are imported; the Secret the sync starts from comes on stdin
// (JSON, or empty for none) and is kept in memory as the API server would keep it. Prints one JSON line:
// { issuerLoaded, wrote }.
import { registerHooks } from 'node:module';
import { readFileSync } from 'node:fs';

const resolved: string[] = [];
registerHooks({
  resolve: (specifier, context, next) => {
    resolved.push(specifier);
    return next(specifier, context);
  },
});

const { SecretCertificates } = await import('../cert-source.ts');
const { pino } = await import('pino');
const { apiErrorFromStatus } = await import('../../kube/api-error.ts');

interface Stored {
  metadata: { name: string; resourceVersion?: string };
  data?: Record<string, string>;
}
const input = readFileSync(0, 'utf8').trim();
let stored: Stored | undefined = input === '' ? undefined : (JSON.parse(input) as Stored);
let wrote = 0;
const client = {
  get: async <T>(): Promise<T> => {
    if (stored === undefined) throw apiErrorFromStatus({ code: 404, reason: 'NotFound', message: 'secrets "certs" not found' }, 404);
    return stored as T;
  },
  create: async <T>(_r: unknown, _ns: unknown, body: unknown): Promise<T> => {
    wrote++;
    stored = { ...(body as Stored), metadata: { ...(body as Stored).metadata, resourceVersion: '1' } };
    return stored as T;
  },
  patch: async <T>(_r: unknown, _ns: unknown, _name: string, patch: unknown): Promise<T> => {
    wrote++;
    const p = patch as Stored;
    stored = {
      metadata: { name: stored?.metadata.name ?? '', resourceVersion: String(Number(stored?.metadata.resourceVersion ?? '0') + 1) },
      ...(p.data !== undefined ? { data: p.data } : {}),
    };
    return stored as T;
  },
};
const source = new SecretCertificates({
  client,
  namespace: 'ns',
  secretName: 'certs',
  hosts: ['localhost', '127.0.0.1'],
  validityMs: 3_600_000,
  clock: { now: () => Date.now(), monotonicNow: () => performance.now(), setTimeout: () => ({ cancel: () => undefined }) },
  logger: pino({ level: 'silent' }),
});
await source.sync();
process.stdout.write(`${JSON.stringify({ issuerLoaded: resolved.some((s) => s.includes('@peculiar/x509') || s.includes('cert-issuer')), wrote, secret: stored })}\n`);
