// The --webhook-* flags and the `webhook` mode of the binary (src/config.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig, UsageError, type ControllerConfig } from '../config.ts';

const parse = (...argv: string[]): ControllerConfig => {
  const c = parseConfig(argv, {});
  assert.ok(c !== 'help');
  return c;
};

describe('webhook flags', () => {
  test('defaults: controller mode with a Service-mode webhook on 9443, Secret in cloneset-system, one-year certificates', () => {
    const c = parse();
    assert.equal(c.mode, 'controller');
    assert.deepEqual(c.webhook, { port: 9443, namespace: 'cloneset-system', namePrefix: 'cloneset-controller', certValidityMs: 8760 * 3_600_000 });
  });

  test('`webhook` mode with URL mode, a mounted certificate directory and a short validity', () => {
    const c = parse(
      'webhook',
      '--webhook-host',
      '127.0.0.1',
      '--webhook-port',
      '19443',
      '--webhook-cert-dir',
      '/certs',
      '--webhook-cert-validity=2m',
      '--webhook-namespace=x',
      '--webhook-name-prefix=blue-cloneset-controller',
    );
    assert.equal(c.mode, 'webhook');
    assert.deepEqual(c.webhook, { port: 19443, host: '127.0.0.1', namespace: 'x', namePrefix: 'blue-cloneset-controller', certDir: '/certs', certValidityMs: 120_000 });
  });

  test('--webhook-port=0 turns the webhook off in controller mode, and is refused in webhook mode', () => {
    assert.equal(parse('--webhook-port=0').webhook.port, 0);
    assert.throws(
      () => parseConfig(['webhook', '--webhook-port=0'], {}),
      (e: unknown) => e instanceof UsageError && /needs a --webhook-port other than 0/.test(e.message),
    );
  });

  test('bad values say what is expected', () => {
    assert.throws(() => parseConfig(['--webhook-port=70000'], {}), /--webhook-port must be a port number/);
    assert.throws(() => parseConfig(['--webhook-cert-validity=10s'], {}), /at least 30s/);
    assert.throws(() => parseConfig(['--webhook-cert-validity=soon'], {}), /invalid duration "soon"/);
    assert.throws(() => parseConfig(['--webhook-name-prefix=Blue_Release'], {}), /--webhook-name-prefix must be a lower-case DNS label/);
  });
});
