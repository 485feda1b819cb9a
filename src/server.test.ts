// The operations endpoints: client-go's rest_client_* metrics and the leadership gauge as Prometheus renders them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newPodEventCounts } from './cloneset/event-handlers.ts';
import { metricsRegistry, restClientMetrics } from './server.ts';

test("requests, retries and latencies are exported under client-go's names and labels; watches are counted but not timed", async () => {
  const registry = metricsRegistry({ ready: () => true });
  const m = restClientMetrics(registry);
  m.request({ method: 'POST', host: '127.0.0.1:6443', code: '429', seconds: 0.01 });
  m.retry({ method: 'POST', host: '127.0.0.1:6443', code: '429' });
  m.request({ method: 'POST', host: '127.0.0.1:6443', code: '201', seconds: 0.02 });
  m.request({ method: 'GET', host: '127.0.0.1:6443', code: '200', seconds: 300, stream: true });
  const text = await registry.metrics();
  assert.match(text, /^rest_client_requests_total\{code="429",method="POST",host="127\.0\.0\.1:6443"\} 1$/m);
  assert.match(text, /^rest_client_requests_total\{code="201",method="POST",host="127\.0\.0\.1:6443"\} 1$/m);
  assert.match(text, /^rest_client_requests_total\{code="200",method="GET",host="127\.0\.0\.1:6443"\} 1$/m);
  assert.match(text, /^rest_client_request_retries_total\{code="429",method="POST",host="127\.0\.0\.1:6443"\} 1$/m);
  assert.match(text, /^rest_client_request_duration_seconds_count\{verb="POST",host="127\.0\.0\.1:6443"\} 2$/m);
  assert.doesNotMatch(text, /rest_client_request_duration_seconds_count\{verb="GET"/);
});

test('leader_election_master_status is 1 while this replica leads and 0 on a standby', async () => {
  let leading = false;
  const registry = metricsRegistry({ ready: () => true, leader: { name: 'cloneset-controller', isLeader: () => leading } });
  assert.match(await registry.metrics(), /^leader_election_master_status\{name="cloneset-controller"\} 0$/m);
  leading = true;
  assert.match(await registry.metrics(), /^leader_election_master_status\{name="cloneset-controller"\} 1$/m);
});

test('pod events are exported by event and result once the manager runs (cloneset_pod_events_total)', async () => {
  let counts: ReturnType<typeof newPodEventCounts> | undefined;
  const registry = metricsRegistry({ ready: () => true, podEvents: () => counts });
  assert.doesNotMatch(await registry.metrics(), /^cloneset_pod_events_total\{/m);
  counts = newPodEventCounts();
  counts.update.ignored = 7;
  counts.update.enqueued = 2;
  const text = await registry.metrics();
  assert.match(text, /^cloneset_pod_events_total\{controller="cloneset-controller",event="update",result="ignored"\} 7$/m);
  assert.match(text, /^cloneset_pod_events_total\{controller="cloneset-controller",event="update",result="enqueued"\} 2$/m);
  assert.match(text, /^cloneset_pod_events_total\{controller="cloneset-controller",event="add",result="enqueued"\} 0$/m);
});
