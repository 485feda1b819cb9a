// The optional API server audit log of a local cluster (`up --audit-log`): one JSON line per write to pods,
// pod subresources, PVCs and Leases at Metadata level (who, when, which object, with what result; no bodies),
// so a chaos run can tell which controller replica wrote what and when (bench/chaos-audit.ts).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';

/** The audit log file of a state dir (kept by `down`, like the other logs). */
export const auditLogPathOf = (stateDir: string): string => join(stateDir, 'logs', 'audit.log');

const POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  // one event per request, when the response is complete
  omitStages: ['RequestReceived', 'ResponseStarted'],
  rules: [
    {
      level: 'Metadata',
      verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'],
      resources: [
        { group: '', resources: ['pods', 'pods/status', 'pods/eviction', 'persistentvolumeclaims'] },
        { group: 'coordination.k8s.io', resources: ['leases'] },
      ],
    },
    { level: 'None' },
  ],
};

/** Writes the policy file and returns the kube-apiserver flags that enable the log. */
export async function auditFlags(stateDir: string, configDir: string): Promise<string[]> {
  const policyFile = join(configDir, 'audit-policy.yaml');
  await writeFile(policyFile, toYaml(POLICY));
  return [
    `--audit-policy-file=${policyFile}`,
    `--audit-log-path=${auditLogPathOf(stateDir)}`,
    '--audit-log-format=json',
    // blocking: an event is written before the response is sent, so a reader never misses a completed write
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=0',
  ];
}
