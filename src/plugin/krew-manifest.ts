// The krew plugin manifest of kubectl-cloneset (`kubectl krew install --manifest=cloneset.yaml`), built by
// hack/dist.ts from the release archive, and krew's own structural rules for a manifest (kubernetes-sigs/krew
// pkg/index/validation/validate.go: ValidatePlugin, validatePlatform, validateSelector), so that a manifest krew
// would refuse is never written. Pure.

export interface KrewPlatform {
  readonly selector: {
    readonly matchLabels?: Readonly<Record<string, string>>;
    readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values: readonly string[] }[];
  };
  readonly uri: string;
  readonly sha256: string;
  readonly files: readonly { readonly from: string; readonly to: string }[];
  readonly bin: string;
}

export interface KrewManifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly version: string;
    readonly homepage?: string;
    readonly shortDescription: string;
    readonly description?: string;
    readonly caveats?: string;
    readonly platforms: readonly KrewPlatform[];
  };
}

const KREW_API_VERSION = 'krew.googlecontainertools.github.com/v1alpha2';

/**
 * One archive for every platform: the plugin is a single JavaScript file that needs Node.js 24, not a native
 * binary. Windows is left out: kubectl runs plugins there only as .exe/.cmd/.bat/.ps1 files.
 */
export function krewManifest(o: { readonly version: string; readonly uri: string; readonly sha256: string }): KrewManifest {
  return {
    apiVersion: KREW_API_VERSION,
    kind: 'Plugin',
    metadata: { name: 'cloneset' },
    spec: {
      version: o.version,
      shortDescription: 'Roll out, watch and explain OpenKruise CloneSets',
      description:
        'kubectl cloneset covers the rollout life cycle of an OpenKruise CloneSet (apps.kruise.io): status that ends,\n' +
        'history, undo, pause, resume, restart, set image, scale, a live tree of revisions and pods, and a dry run of\n' +
        "what the controller's next reconcile would do and why.",
      caveats: 'Needs Node.js 24 or newer on PATH (node --version).',
      platforms: [
        {
          selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['linux', 'darwin'] }] },
          uri: o.uri,
          sha256: o.sha256,
          files: [{ from: 'kubectl-cloneset', to: '.' }],
          bin: 'kubectl-cloneset',
        },
      ],
    },
  };
}

const SAFE_NAME = /^[\w-]+$/;
const WINDOWS_FORBIDDEN = ['CON', 'PRN', 'AUX', 'NUL', ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [`COM${n}`, `LPT${n}`])];
const SHA256 = /^[a-f0-9]{64}$/;
/** krew's semver.Parse: a leading "v", then semantic versioning 2.0. */
const SEMVER = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

/** The problems krew would report for the manifest of plugin `name`; empty when krew accepts it. */
export function validateKrewManifest(name: string, m: KrewManifest): string[] {
  const problems: string[] = [];
  if (m.apiVersion !== KREW_API_VERSION) problems.push(`plugin manifest has apiVersion=${JSON.stringify(m.apiVersion)}, not supported`);
  if (m.kind !== 'Plugin') problems.push(`plugin manifest has kind=${JSON.stringify(m.kind)}, but only "Plugin" is supported`);
  if (!SAFE_NAME.test(name) || WINDOWS_FORBIDDEN.includes(name.toUpperCase())) problems.push(`the plugin name ${JSON.stringify(name)} is not allowed`);
  if (m.metadata.name !== name) problems.push(`plugin should be named ${JSON.stringify(name)}, not ${JSON.stringify(m.metadata.name)}`);
  if (m.spec.shortDescription === '') problems.push('should have a short description');
  if (m.spec.platforms.length === 0) problems.push('should have a platform specified');
  if (m.spec.version === '') problems.push('should have a version specified');
  else if (!SEMVER.test(m.spec.version)) problems.push(`failed to parse plugin version ${JSON.stringify(m.spec.version)}`);
  m.spec.platforms.forEach((p, i) => {
    const at = `platform ${i}`;
    if (p.uri === '') problems.push(`${at}: URI has to be set`);
    if (p.sha256 === '') problems.push(`${at}: sha256 sum has to be set`);
    else if (!SHA256.test(p.sha256)) problems.push(`${at}: sha256 value ${p.sha256} is not valid`);
    if (p.bin === '') problems.push(`${at}: bin has to be set`);
    if (p.files.length === 0) problems.push(`${at}: can't have a plugin without specifying file operations`);
    const { matchLabels, matchExpressions } = p.selector;
    if (matchLabels === undefined && (matchExpressions?.length ?? 0) === 0) problems.push(`${at}: empty selector is not supported`);
    for (const key of [...Object.keys(matchLabels ?? {}), ...(matchExpressions ?? []).map((e) => e.key)]) {
      if (key !== 'os' && key !== 'arch') problems.push(`${at}: selector key ${JSON.stringify(key)} not supported`);
    }
    if (matchLabels !== undefined && Object.keys(matchLabels).length === 0) problems.push(`${at}: matchLabels specified but empty`);
    if (matchExpressions !== undefined && matchExpressions.length === 0) problems.push(`${at}: matchExpressions specified but empty`);
  });
  return problems;
}
