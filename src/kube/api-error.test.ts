import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, ConnectionError, apiErrorFromResponse, apiErrorFromStatus, isAlreadyExists, isConflict, isGone, isInvalid, isNotFound } from './api-error.ts';
import { retryAfterMsOf } from '../runtime/controller.ts';

const status = (code: number, reason: string, message = 'msg', details: object = {}): string =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details });

describe('ApiError from a Status body', () => {
  it('takes reason, code and message from the Status', () => {
    const e = apiErrorFromResponse(404, status(404, 'NotFound', 'pods "p" not found'), { request: 'GET /api/v1/namespaces/n/pods/p' });
    assert.ok(e instanceof ApiError);
    assert.equal(e.reason, 'NotFound');
    assert.equal(e.code, 404);
    assert.equal(e.message, 'GET /api/v1/namespaces/n/pods/p: pods "p" not found');
    assert.ok(isNotFound(e) && !isConflict(e));
  });

  it('tells AlreadyExists from Conflict although both are 409', () => {
    assert.ok(isAlreadyExists(apiErrorFromResponse(409, status(409, 'AlreadyExists'))));
    assert.ok(isConflict(apiErrorFromResponse(409, status(409, 'Conflict'))));
  });

  it('maps "Expired" and a bare 410 to Gone', () => {
    const expired = apiErrorFromStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' }, 0);
    assert.ok(isGone(expired));
    assert.equal(expired.serverReason, 'Expired');
    assert.ok(isGone(apiErrorFromResponse(410, '{}')));
  });

  it('keeps the field causes of an Invalid error', () => {
    const e = apiErrorFromResponse(422, status(422, 'Invalid', 'ConfigMap "x" is invalid', { causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }] }));
    assert.ok(isInvalid(e));
    assert.deepEqual(e.causes, [{ reason: 'FieldValueInvalid', field: 'metadata.name' }]);
  });

  it('maps by HTTP code when the body is not a Status', () => {
    const e = apiErrorFromResponse(503, 'upstream connect error');
    assert.equal(e.reason, 'Unavailable');
    assert.match(e.message, /HTTP 503: upstream connect error/);
    assert.equal(apiErrorFromResponse(429, '', {}).reason, 'TooManyRequests');
    assert.equal(apiErrorFromResponse(418, '').reason, 'Unknown');
  });

  it('keeps retryAfterSeconds', () => {
    assert.equal(apiErrorFromResponse(429, status(429, 'TooManyRequests', 'slow down', { retryAfterSeconds: 3 })).retryAfterSeconds, 3);
  });
});

describe('ConnectionError', () => {
  it('says where it tried and to check that the API server is reachable', () => {
    const e = new ConnectionError('https://127.0.0.1:6443', 'GET /api/v1/pods', new Error('connect ECONNREFUSED 127.0.0.1:6443'));
    assert.match(e.message, /cannot reach the Kubernetes API server at https:\/\/127\.0\.0\.1:6443 \(GET \/api\/v1\/pods\): connect ECONNREFUSED/);
    assert.match(e.message, /check that the API server is running and reachable/);
    assert.ok(!isNotFound(e));
  });
});

it('a 429 Status with retryAfterSeconds tells the work queue how long to wait', () => {
  const e = apiErrorFromStatus({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down', details: { retryAfterSeconds: 3 } }, 429);
  assert.equal(retryAfterMsOf(e), 3000);
  assert.equal(retryAfterMsOf(apiErrorFromStatus({ kind: 'Status', code: 409, reason: 'Conflict' }, 409)), undefined);
});
