// Timestamps as Kubernetes writes them: metav1.Time is RFC 3339 in UTC with second precision (Go's
// time.Format(time.RFC3339)), metav1.MicroTime has microseconds (leases, events.k8s.io). The one formatter of each.

/** metav1.Time: `2006-01-02T15:04:05Z`, the fraction dropped (never rounded up). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** metav1.MicroTime: `2006-01-02T15:04:05.000000Z` (JavaScript has milliseconds: the last three digits are 0). */
export function rfc3339Micro(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}
