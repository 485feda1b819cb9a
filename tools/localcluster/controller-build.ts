// The controller as it ships: dist/main.js, compiled from src/ by hack/build.sh (a no-op when dist/ is fresh). The
// benchmarks, the chaos command and the integration tests start this rather than src/main.ts, so that what they
// measure and test is what bin/cloneset-controller and the image run (docs/performance.md: type stripping alone
// costs ~30 MiB of RSS).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './binaries.ts';

/** The node flags of bin/cloneset-controller and of the image's entrypoint (docs/performance.md). */
export const CONTROLLER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--optimize-for-size'];

/** Builds dist/ when a source changed since the last build (progress on stderr) and returns dist/main.js. */
export function builtControllerMain(): string {
  const root = repoRoot();
  execFileSync('bash', [join(root, 'hack', 'build.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  return join(root, 'dist', 'main.js');
}
