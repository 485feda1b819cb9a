// Waiting for components to become ready: polling with a deadline that also gives up when the process died.
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type HttpResponse } from './http.ts';

/** Polls `check` until it returns true; rejects on deadline or when `died` rejects. */
export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, died?: Promise<never>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  const poll = async (): Promise<void> => {
    let delay = 50;
    for (;;) {
      try {
        if (await check()) return;
        lastError = '';
      } catch (e) {
        lastError = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${String(timeoutMs / 1000)}s waiting for ${what}${lastError === '' ? '' : ` (last error: ${lastError})`}`);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 500);
    }
  };
  await (died === undefined ? poll() : Promise.race([poll(), died]));
}

/** Waits for a component's /healthz (self-signed certificates: not verified) to answer 200. */
export function waitForHealthz(url: string, timeoutMs: number, died: Promise<never>): Promise<void> {
  return waitFor(
    url,
    timeoutMs,
    async () => {
      const r = await request(url, { tls: { insecure: true }, timeoutMs: 2000 });
      return r.status === 200;
    },
    died,
  );
}

export function isJsonOk(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}
