// A free TCP port on 127.0.0.1, for the local control plane's components and for the controller processes that
// tests, benchmarks and the chaos command start (metrics, probes). The port is released before it is returned, so a
// caller races other processes for it; on a development machine that race is practically never lost.
import net from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolvePort(port) : reject(new Error('no free port'))));
    });
  });
}

/** Whether `port` on 127.0.0.1 can be listened on now (nothing listens there). */
export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', () => resolveFree(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolveFree(true)));
  });
}
