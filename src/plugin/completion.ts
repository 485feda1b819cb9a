// Shell completion. `kubectl cloneset completion bash|zsh` prints a script for the `kubectl-cloneset` command;
// under `kubectl cloneset …`, kubectl (>= 1.26) asks an executable `kubectl_complete-cloneset` on PATH, which
// runs `kubectl-cloneset __complete WORDS…` (docs/kubectl-plugin.md). `__complete` answers as cobra programs do —
// kubectl's plugin completion expects that: one candidate per line, then `:<directive>` (4: no file names).
// What to offer is decided here, purely; the CloneSet and namespace names come from the cluster (cli.ts).

export type CompletionNeed = 'none' | 'cloneset-names' | 'namespaces';

export interface Completion {
  readonly candidates: readonly string[];
  /** Names to add from the cluster, when the word is a NAME or a namespace. */
  readonly need: CompletionNeed;
}

const COMMANDS = ['get', 'plan', 'rollout', 'set', 'scale', 'completion', 'version'];
const ROLLOUT = ['status', 'history', 'undo', 'pause', 'resume', 'restart'];
const GLOBAL_FLAGS = ['--namespace', '--context', '--kubeconfig', '--output', '--help', '--all-namespaces', '--selector', '--version'];
const FLAGS_OF: Readonly<Record<string, readonly string[]>> = {
  get: ['--watch'],
  status: ['--timeout', '--watch'],
  history: ['--revision'],
  undo: ['--to-revision'],
  restart: ['--mode'],
  scale: ['--replicas'],
  plan: ['--feature-gates', '--cloneset-surge-rule', '--cloneset-scaling-exclude-preparing-delete'],
};
const VALUES_OF: Readonly<Record<string, readonly string[]>> = {
  '--output': ['json', 'yaml', 'wide'],
  '-o': ['json', 'yaml', 'wide'],
  '--mode': ['auto', 'recreate', 'in-place'],
  '--cloneset-surge-rule': ['sustained', 'kruise'],
};
const TAKES_VALUE = new Set([
  '-n',
  '--namespace',
  '--context',
  '--kubeconfig',
  '-o',
  '--output',
  '-l',
  '--selector',
  '--timeout',
  '--revision',
  '--to-revision',
  '--mode',
  '--replicas',
  '--feature-gates',
  '--cloneset-surge-rule',
]);

const startingWith = (prefix: string, words: readonly string[]): string[] => words.filter((w) => w.startsWith(prefix));

/** What to offer for the last of `words` (the words after the program name; the last one may be empty). */
export function complete(words: readonly string[]): Completion {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const previous = before.at(-1);
  if (previous !== undefined && TAKES_VALUE.has(previous)) {
    if (previous === '-n' || previous === '--namespace') return { candidates: [], need: 'namespaces' };
    return { candidates: startingWith(current, VALUES_OF[previous] ?? []), need: 'none' };
  }
  // The positionals typed so far, flags and their values left out.
  const positionals: string[] = [];
  for (let i = 0; i < before.length; i++) {
    const w = before[i] ?? '';
    if (w.startsWith('-')) {
      if (TAKES_VALUE.has(w)) i++;
      continue;
    }
    positionals.push(w);
  }
  const [command, sub] = positionals;
  const specific = [...(FLAGS_OF[command ?? ''] ?? []), ...(FLAGS_OF[sub ?? ''] ?? [])];
  if (current.startsWith('-')) return { candidates: startingWith(current, [...specific, ...GLOBAL_FLAGS]), need: 'none' };
  if (command === undefined) return { candidates: startingWith(current, COMMANDS), need: 'none' };
  const nameAt = command === 'rollout' || command === 'set' ? 2 : 1;
  if (command === 'rollout' && positionals.length === 1) return { candidates: startingWith(current, ROLLOUT), need: 'none' };
  if (command === 'set' && positionals.length === 1) return { candidates: startingWith(current, ['image']), need: 'none' };
  if (command === 'completion' && positionals.length === 1) return { candidates: startingWith(current, ['bash', 'zsh']), need: 'none' };
  if (['get', 'plan', 'rollout', 'set', 'scale'].includes(command) && positionals.length === nameAt) return { candidates: [], need: 'cloneset-names' };
  return { candidates: [], need: 'none' };
}

/** The `__complete` answer: candidates, then cobra's directive line (4 = ShellCompDirectiveNoFileComp). */
export function completionAnswer(candidates: readonly string[]): string {
  return `${[...candidates, ':4'].join('\n')}\n`;
}

export function completionScript(shell: string): string | undefined {
  if (shell === 'bash') {
    return [
      '# bash completion for kubectl-cloneset: source <(kubectl-cloneset completion bash)',
      '_kubectl_cloneset() {',
      "  local IFS=$'\\n'",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell code of the completion script, not a JavaScript template
      '  COMPREPLY=($(kubectl-cloneset __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null | grep -v "^:"))',
      '}',
      'complete -o default -F _kubectl_cloneset kubectl-cloneset',
      '',
    ].join('\n');
  }
  if (shell === 'zsh') {
    return [
      '#compdef kubectl-cloneset',
      '# zsh completion for kubectl-cloneset: source <(kubectl-cloneset completion zsh)',
      '_kubectl_cloneset() {',
      '  local -a candidates',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell code of the completion script, not a JavaScript template
      '  candidates=("${(@f)$(kubectl-cloneset __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell code of the completion script, not a JavaScript template
      '  candidates=("${(@)candidates:#:*}")',
      '  compadd -a candidates',
      '}',
      'compdef _kubectl_cloneset kubectl-cloneset',
      '',
    ].join('\n');
  }
  return undefined;
}
