import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerBody } from './network.ts';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', resourceVersion: '7' }, spec: { containers: [] }, status: { phase: 'Pending' } };

describe('the simulated API server encodes an answer for its Accept header', () => {
  it('answers a write asked as metadata only with a PartialObjectMetadata of the object', () => {
    const body = answerBody({ status: 201, body: JSON.stringify(pod) }, true);
    assert.deepEqual(JSON.parse(body), { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'p', resourceVersion: '7' } });
  });

  it('sends the whole object when metadata only was not asked for', () => {
    assert.deepEqual(JSON.parse(answerBody({ status: 200, body: JSON.stringify(pod) }, false)), pod);
  });

  it('sends a Status and an error answer as they are', () => {
    const status = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' });
    assert.equal(answerBody({ status: 200, body: status }, true), status);
    const conflict = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, code: 409, reason: 'Conflict' });
    assert.equal(answerBody({ status: 409, body: conflict }, true), conflict);
  });
});
