import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { freePort, portIsFree } from './free-port.ts';

describe('a local port', () => {
  it('is not free while something listens on it, and free once that closes', async () => {
    const port = await freePort();
    const srv = net.createServer();
    await new Promise<void>((resolve) => srv.listen(port, '127.0.0.1', resolve));
    assert.equal(await portIsFree(port), false);
    await new Promise<void>((resolve) => srv.close(() => resolve()));
    assert.equal(await portIsFree(port), true);
  });
});
