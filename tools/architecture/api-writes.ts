// "No module but the executor writes to the API" (docs/adr/0006-single-write-policy.md): neither dependency-cruiser
// (it sees imports, not calls) nor Biome (no rule for "this method is called outside these files") can say it, so it
// is checked here on the text of src/. Comments and string literals are blanked first so a mention is not a call.

/**
 * The executor: the only modules that write to the API for the CloneSet controller. ports.ts implements the write
 * ports on the client; write-policy.ts wraps them (fencing, log line, 409/422 → requeue).
 */
export const isWriter = (path: string): boolean => /^cloneset\/(execute(-[a-z-]+)?|write-policy|ports)\.ts$/.test(path);

/** Tests and test fixtures call the ports on purpose. */
const isTestCode = (path: string): boolean => path.endsWith('.test.ts') || /(^|\/)testing\//.test(path);

/** The write methods of the executor's ports (cloneset/ports.ts): calling one is an API write. */
export const WRITE_PORT_METHODS: readonly string[] = [
  'createPod',
  'deletePod',
  'patchPod',
  'patchPodStatus',
  'patchPodResize',
  'createPvc',
  'deletePvc',
  'patchPvc',
  'createRevision',
  'updateRevision',
  'patchRevision',
  'deleteRevision',
  'updateStatus',
  'patchCloneSet',
  'createImagePullJob',
  'deleteImagePullJob',
];

/** The KubeClient's write verbs; in cloneset/ only the executor's ports may call them on a client. */
const CLIENT_WRITE_VERBS = ['create', 'patch', 'update', 'delete'];

export interface ApiWrite {
  readonly line: number;
  readonly call: string;
}

/** The text with comments and string/template literals replaced by spaces (newlines kept, so lines stay). */
export function blankCommentsAndStrings(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g, (m) => m.replace(/[^\n]/g, ' '));
}

/** The API writes a module of src/ makes outside the executor: empty for the executor and for test code. */
export function apiWritesOutsideExecutor(path: string, text: string): ApiWrite[] {
  if (isWriter(path) || isTestCode(path)) return [];
  const code = blankCommentsAndStrings(text);
  const calls = new RegExp(`(\\w*)\\??\\.(${WRITE_PORT_METHODS.join('|')}|${CLIENT_WRITE_VERBS.join('|')})\\s*\\(`, 'g');
  const found: ApiWrite[] = [];
  for (const m of code.matchAll(calls)) {
    const receiver = m[1] ?? '';
    const method = m[2] ?? '';
    const portWrite = WRITE_PORT_METHODS.includes(method);
    const clientWrite = path.startsWith('cloneset/') && CLIENT_WRITE_VERBS.includes(method) && /client$/i.test(receiver);
    if (portWrite || clientWrite) found.push({ line: code.slice(0, m.index).split('\n').length, call: `${receiver}.${method}()` });
  }
  return found;
}
