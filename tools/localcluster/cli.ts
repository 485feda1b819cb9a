// node tools/localcluster/cli.ts up|down|env|status [--state-dir DIR] [--name NAME] [--nodes N] [--large]
// (also: npm run cluster -- up). Progress goes to stderr; `up` and `env` print `export KUBECONFIG=…` on stdout.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { clusterStatus, defaultStateDir, kubeconfigPathOf, startLocalCluster, stopLocalCluster } from './cluster.ts';

const USAGE = `usage: node tools/localcluster/cli.ts <up|down|env|status> [--state-dir DIR | --name NAME] [--nodes N] [--timeout SECONDS] [--audit-log] [--large]
  up      start etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (+ N fake nodes, default 3);
          --large: the profile for 100 000 pods (20 nodes, higher scheduler/controller-manager client limits,
          parallel collection deletes; docs/performance.md);
          prints "export KUBECONFIG=<state-dir>/kubeconfig"; --audit-log: kube-apiserver logs every pod, PVC and
          Lease write (Metadata level, JSON) to <state-dir>/logs/audit.log
  down    stop every process of the state dir and delete its data (idempotent)
  env     print the export KUBECONFIG line
  status  which components run
  default state dir: <repo>/.cluster/<name> (name "default")`;

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      'state-dir': { type: 'string' },
      name: { type: 'string' },
      nodes: { type: 'string' },
      timeout: { type: 'string' },
      'audit-log': { type: 'boolean' },
      large: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help === true || command === undefined || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`);
    return values.help === true ? 0 : 2;
  }
  const stateDir = resolve(values['state-dir'] ?? defaultStateDir(values.name ?? 'default'));
  const exportLine = `export KUBECONFIG=${shellQuote(kubeconfigPathOf(stateDir))}\n`;

  switch (command) {
    case 'up': {
      const nodes = values.nodes === undefined ? undefined : Number(values.nodes);
      if (nodes !== undefined && (!Number.isInteger(nodes) || nodes < 0)) throw new Error(`--nodes: not a count: ${values.nodes ?? ''}`);
      const timeout = values.timeout === undefined ? undefined : Number(values.timeout) * 1000;
      if (timeout !== undefined && !(timeout > 0)) throw new Error(`--timeout: not a number of seconds: ${values.timeout ?? ''}`);
      await startLocalCluster({
        stateDir,
        ...(nodes === undefined ? {} : { nodes }),
        ...(timeout === undefined ? {} : { timeoutMs: timeout }),
        auditLog: values['audit-log'] === true,
        profile: values.large === true ? 'large' : 'default',
      });
      process.stdout.write(exportLine);
      return 0;
    }
    case 'down':
      await stopLocalCluster(stateDir);
      process.stderr.write(`cluster in ${stateDir} is down\n`);
      return 0;
    case 'env': {
      const st = await clusterStatus(stateDir);
      if (!st.running) process.stderr.write(`warning: the cluster in ${stateDir} is not running (node tools/localcluster/cli.ts up)\n`);
      process.stdout.write(exportLine);
      return 0;
    }
    case 'status': {
      const st = await clusterStatus(stateDir);
      const out: string[] = [`state dir: ${stateDir}`];
      if (st.state === undefined) {
        out.push('not started');
      } else {
        out.push(`server: ${st.state.server} (ready: ${st.apiserverReady ? 'yes' : 'no'})`, `kubeconfig: ${st.state.kubeconfigPath}`);
        for (const c of st.components) {
          out.push(`  ${c.name.padEnd(24)} ${c.running ? 'running' : 'stopped'}${c.pid === undefined ? '' : ` (pid ${String(c.pid)})`}`);
        }
      }
      out.push(st.running ? 'status: running' : 'status: not running');
      process.stdout.write(`${out.join('\n')}\n`);
      return st.running ? 0 : 1;
    }
    default:
      process.stderr.write(`unknown command ${command}\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
