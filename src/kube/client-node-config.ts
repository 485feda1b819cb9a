// client-node's KubeConfig without its generated API. `@kubernetes/client-node`'s entry point (and even its
// dist/config.js) imports the whole generated API (`./gen/index.js`: every model and API class) for the sake of
// `KubeConfig.makeApiClient`, which this project never calls: ~50 MiB of resident memory in a controller whose
// own state is a few MiB, and the proxy/fetch libraries below. So KubeConfig is loaded here from dist/config.js,
// with a synchronous module hook (node:module registerHooks) that answers those imports with stubs. Everything the
// REST client uses (loading, merging, contexts, applyToHTTPSOptions with exec/token/certificate auth) is
// client-node's own code, unchanged. Measured in docs/performance.md.
import { createRequire, registerHooks } from 'node:module';
import type { KubeConfig } from '@kubernetes/client-node';

const stub = (lines: readonly string[]): string => 'data:text/javascript,' + encodeURIComponent(lines.join('\n'));
const unavailable = (what: string): string =>
  `const unavailable = () => { throw new Error('${what} is not available in cloneset-controller: it talks to the API server through src/kube/transport.ts'); };`;

/**
 * What config.js imports, answered instead of the real module. The generated API serves only makeApiClient;
 * undici only applyToFetchOptions (fetch dispatchers); socks and hpagent only the `agent` that
 * applyToHTTPSOptions builds for a cluster's proxy-url, which transport.ts never uses (it builds its own agent
 * from the ca/cert/key) — so those agents become inert objects that nothing uses.
 */
export const STUBS: Readonly<Record<string, string>> = {
  './gen/index.js': stub([
    unavailable('KubeConfig.makeApiClient'),
    'export function createConfiguration() { unavailable(); }',
    'export class ServerConfiguration { constructor() { unavailable(); } }',
  ]),
  undici: stub([
    unavailable('KubeConfig.applyToFetchOptions'),
    'export class Agent { constructor() { unavailable(); } }',
    'export class ProxyAgent { constructor() { unavailable(); } }',
  ]),
  'socks-proxy-agent': stub(['export class SocksProxyAgent {}']),
  socks: stub([unavailable('a SOCKS proxy'), 'export const SocksClient = { createConnection: unavailable };']),
  hpagent: stub(['export class HttpProxyAgent {}', 'export class HttpsProxyAgent {}']),
};

let loaded: typeof KubeConfig | undefined;

/** The KubeConfig class (loaded on first use; an already loaded full client-node is shared, not loaded twice). */
export function kubeConfigClass(): typeof KubeConfig {
  if (loaded !== undefined) return loaded;
  registerHooks({
    resolve(specifier, context, next) {
      const url = STUBS[specifier];
      if (url !== undefined && (context.parentURL ?? '').endsWith('/@kubernetes/client-node/dist/config.js')) return { url, shortCircuit: true };
      return next(specifier, context);
    },
  });
  // require() of an ES module (Node >= 22.12): synchronous, so loadKubeConfig stays synchronous.
  const mod: unknown = createRequire(import.meta.url)('@kubernetes/client-node/dist/config.js');
  if (typeof mod !== 'object' || mod === null || !('KubeConfig' in mod) || typeof mod.KubeConfig !== 'function') {
    throw new Error('@kubernetes/client-node/dist/config.js does not export KubeConfig: is the installed client-node version the one in package.json?');
  }
  loaded = mod.KubeConfig as typeof KubeConfig;
  return loaded;
}
