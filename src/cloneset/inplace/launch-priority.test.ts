// docs/features.md#in-place-update (Kruise pkg/util/inplaceupdate/inplace_update_defaults.go): the launch priority of each container, from the barrier env Kruise's webhook injects, or derived
// the way that webhook derives it (annotation Ordered, env KRUISE_CONTAINER_PRIORITY).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../kube/types.ts';
import { containerLaunchPriorities } from './launch-priority.ts';

const barrier = (key: string): unknown => ({ name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: 'p-barrier', key } } });
const priority = (value: string): unknown => ({ name: 'KRUISE_CONTAINER_PRIORITY', value });

function pod(containers: readonly Container[], annotations?: Record<string, string>): Pod {
  return { metadata: { name: 'p', ...(annotations !== undefined ? { annotations } : {}) }, spec: { containers } };
}

const entries = (p: Pod): [string, number][] => [...containerLaunchPriorities(p)];

describe('containerLaunchPriorities', () => {
  test('a pod Kruise created: the barrier env key p_<n>; a container without it has no priority', () => {
    assert.deepEqual(entries(pod([{ name: 'a', env: [barrier('p_-1')] }, { name: 'b', env: [barrier('p_5')] }, { name: 'c' }])), [
      ['a', -1],
      ['b', 5],
    ]);
  });

  test('an unparsable barrier key reads as 0, as Go does when it ignores the Atoi error', () => {
    assert.deepEqual(
      entries(
        pod([
          { name: 'a', env: [barrier('p_x')] },
          { name: 'b', env: [barrier('p_2')] },
        ]),
      ),
      [
        ['a', 0],
        ['b', 2],
      ],
    );
  });

  test('the barrier env wins over the annotation and the priority env', () => {
    const p = pod(
      [
        { name: 'a', env: [barrier('p_1'), priority('9')] },
        { name: 'b', env: [barrier('p_2')] },
      ],
      { 'apps.kruise.io/container-launch-priority': 'Ordered' },
    );
    assert.deepEqual(entries(p), [
      ['a', 1],
      ['b', 2],
    ]);
  });

  test('annotation Ordered: the containers in spec order, first highest', () => {
    assert.deepEqual(entries(pod([{ name: 'a' }, { name: 'b' }, { name: 'c' }], { 'apps.kruise.io/container-launch-priority': 'Ordered' })), [
      ['a', 0],
      ['b', -1],
      ['c', -2],
    ]);
  });

  test('env KRUISE_CONTAINER_PRIORITY: containers without it are 0', () => {
    assert.deepEqual(entries(pod([{ name: 'a' }, { name: 'b', env: [priority('10')] }])), [
      ['a', 0],
      ['b', 10],
    ]);
  });

  test('no priorities: one container, all equal, all zero, or a value that is not an integer', () => {
    assert.deepEqual(entries(pod([{ name: 'a', env: [priority('3')] }], { 'apps.kruise.io/container-launch-priority': 'Ordered' })), []);
    assert.deepEqual(
      entries(
        pod([
          { name: 'a', env: [priority('3')] },
          { name: 'b', env: [priority('3')] },
        ]),
      ),
      [],
    );
    assert.deepEqual(entries(pod([{ name: 'a', env: [priority('0')] }, { name: 'b' }])), []);
    assert.deepEqual(
      entries(
        pod([
          { name: 'a', env: [priority('high')] },
          { name: 'b', env: [priority('1')] },
        ]),
      ),
      [],
    );
    assert.deepEqual(entries(pod([{ name: 'a' }, { name: 'b' }], { 'apps.kruise.io/container-launch-priority': 'Random' })), []);
  });
});
