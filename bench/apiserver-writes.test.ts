import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiServerWrites, writesPerPod } from './apiserver-writes.ts';

// Lines as kube-apiserver 1.34 exposes them (a 5 000-pod fleet scale-up), with reads and a HELP line around.
const BODY = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb...
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 9900
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 100
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 5000
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} 5000
apiserver_request_total{code="201",component="apiserver",dry_run="",group="events.k8s.io",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 5000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps.kruise.io",resource="clonesets",scope="resource",subresource="status",verb="PUT",version="v1beta1"} 338
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 20
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 12
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 9
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/readyz",verb="GET",version=""} 3
`;

describe('the API server write counters', () => {
  it('sums each resource and verb over codes but 409, names the group outside core, and leaves reads out', () => {
    assert.deepEqual(Object.fromEntries(apiServerWrites(BODY)), {
      'pods/status PATCH': 9900,
      'pods/status PATCH 409': 100,
      'pods POST': 5000,
      'pods/binding POST': 5000,
      'events.k8s.io/events POST': 5000,
      'apps.kruise.io/clonesets/status PUT': 338,
      'coordination.k8s.io/leases PUT': 20,
    });
  });

  it('prints writes per pod, the largest first, without background writes below 0.01 per pod, and the refused ones apart', () => {
    assert.equal(
      writesPerPod(apiServerWrites(BODY), 5000),
      '5.05 (pods/status PATCH 1.98, pods POST 1.00, pods/binding POST 1.00, events.k8s.io/events POST 1.00, apps.kruise.io/clonesets/status PUT 0.07), refused (409) 0.02 (pods/status PATCH 0.02)',
    );
  });
});
