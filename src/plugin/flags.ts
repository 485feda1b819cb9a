// Command-line parsing for kubectl-cloneset with kubectl's conventions: global flags anywhere on the line
// (`-n`, `--namespace`, `--context`, `--kubeconfig`, `-o`), `--flag=value` and `--flag value`, and boolean
// flags written as `--watch`, `--watch=true` or `--watch=false` (pflag accepts all three).
import { parseArgs } from 'node:util';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type OutputFormat = 'json' | 'yaml' | 'wide' | 'text';

export interface Flags {
  readonly positionals: readonly string[];
  readonly namespace?: string;
  readonly context?: string;
  readonly kubeconfig?: string;
  readonly output: OutputFormat;
  readonly help: boolean;
  /** --version */
  readonly version: boolean;
  /** -A, --all-namespaces */
  readonly allNamespaces: boolean;
  /** -l, --selector */
  readonly selector?: string;
  readonly watch?: boolean;
  readonly timeoutMs?: number;
  readonly revision?: number;
  readonly toRevision?: number;
  readonly replicas?: number;
  readonly featureGates?: string;
  readonly surgeRule?: string;
  readonly excludePreparingDelete: boolean;
  /** rollout restart --mode */
  readonly mode?: string;
}

/** Boolean flags and their one-letter forms. */
const BOOLEAN_FLAGS: Readonly<Record<string, string | undefined>> = {
  watch: 'w',
  help: 'h',
  version: undefined,
  'all-namespaces': 'A',
  'cloneset-scaling-exclude-preparing-delete': undefined,
};

/**
 * `--watch=true` / `-w=true` → `--watch`, `--watch=false` / `-w=false` → `--no-watch` (pflag accepts all of these;
 * node's parseArgs takes no value for booleans).
 */
function normaliseBooleans(argv: readonly string[]): string[] {
  return argv.map((a) => {
    for (const [f, short] of Object.entries(BOOLEAN_FLAGS)) {
      for (const form of short === undefined ? [`--${f}`] : [`--${f}`, `-${short}`]) {
        if (a === `${form}=true`) return `--${f}`;
        if (a === `${form}=false`) return `--no-${f}`;
      }
    }
    return a;
  });
}

/** The flag a parseArgs message quotes: "Unknown option '--foo'", "Option '-n, --namespace <value>' argument missing". */
const QUOTED_FLAG = /'(-[^']*?)(?: <value>)?'/;

/** node's parseArgs error, in pflag's words (no advice about `--` that makes no sense for this command). */
function usageMessage(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  const text = e instanceof Error ? e.message : String(e);
  const quoted = QUOTED_FLAG.exec(text)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag: ${quoted ?? text}`;
  const names = (quoted ?? '').split(', ');
  const long = names.at(-1) ?? '';
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && text.includes('does not take an argument')) {
    return `invalid argument for "${names.join(', ')}" flag: write ${long}, ${long}=true or ${long}=false`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return `flag needs an argument: ${long}`;
  return text.split('. ')[0] ?? text;
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration as kubectl takes it (`5m`, `1m30s`, `90s`, `0` = no limit); a bare number means seconds. */
export function parseDuration(flag: string, text: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * (DURATION_UNITS[m[2] ?? ''] ?? 0);
    matched += m[0].length;
  }
  if (matched !== text.length || text.length === 0) throw new UsageError(`invalid argument "${text}" for "--${flag}" flag: use a duration such as 30s, 5m or 1h`);
  return total;
}

function nonNegativeInt(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`invalid argument "${text}" for "--${flag}" flag: must be a non-negative integer`);
  return Number(text);
}

/** Short flags written `-n=ns` (pflag accepts it; node's parseArgs keeps the `=`). */
const stripEquals = (v: string | undefined): string | undefined => (v?.startsWith('=') === true ? v.slice(1) : v);

export function parseFlags(argv: readonly string[]): Flags {
  let parsed;
  try {
    parsed = parseArgs({
      args: normaliseBooleans(argv),
      allowPositionals: true,
      allowNegative: true,
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        context: { type: 'string' },
        kubeconfig: { type: 'string' },
        output: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
        'all-namespaces': { type: 'boolean', short: 'A' },
        selector: { type: 'string', short: 'l' },
        watch: { type: 'boolean', short: 'w' },
        timeout: { type: 'string' },
        revision: { type: 'string' },
        'to-revision': { type: 'string' },
        replicas: { type: 'string' },
        'feature-gates': { type: 'string' },
        'cloneset-surge-rule': { type: 'string' },
        'cloneset-scaling-exclude-preparing-delete': { type: 'boolean' },
        mode: { type: 'string' },
      },
    });
  } catch (e) {
    throw new UsageError(`${usageMessage(e)}\nSee 'kubectl cloneset --help' for usage.`);
  }
  const v = parsed.values;
  const output = stripEquals(v.output) ?? 'text';
  if (output !== 'json' && output !== 'yaml' && output !== 'wide' && output !== 'text') {
    throw new UsageError(`unable to match a printer suitable for the output format "${output}", allowed formats are: json,yaml,wide`);
  }
  const namespace = stripEquals(v.namespace);
  const timeout = v.timeout === undefined ? undefined : parseDuration('timeout', v.timeout);
  const revision = nonNegativeInt('revision', v.revision);
  const toRevision = nonNegativeInt('to-revision', v['to-revision']);
  const replicas = nonNegativeInt('replicas', v.replicas);
  return {
    positionals: parsed.positionals,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(v.context !== undefined ? { context: v.context } : {}),
    ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
    output,
    help: v.help === true,
    version: v.version === true,
    allNamespaces: v['all-namespaces'] === true,
    ...(stripEquals(v.selector) !== undefined ? { selector: stripEquals(v.selector) ?? '' } : {}),
    ...(v.watch !== undefined ? { watch: v.watch } : {}),
    ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
    ...(revision !== undefined ? { revision } : {}),
    ...(toRevision !== undefined ? { toRevision } : {}),
    ...(replicas !== undefined ? { replicas } : {}),
    ...(v['feature-gates'] !== undefined ? { featureGates: v['feature-gates'] } : {}),
    ...(v['cloneset-surge-rule'] !== undefined ? { surgeRule: v['cloneset-surge-rule'] } : {}),
    excludePreparingDelete: v['cloneset-scaling-exclude-preparing-delete'] === true,
    ...(v.mode !== undefined ? { mode: v.mode } : {}),
  };
}
