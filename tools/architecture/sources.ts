// The files of src/ for the architecture checks that no tool does (architecture.test.ts): paths relative to src/.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const SRC = join(ROOT, 'src');

export interface SourceFile {
  /** Relative to src/, with forward slashes: `cloneset/execute.ts`. */
  readonly path: string;
  readonly text: string;
}

export function sourceFiles(): SourceFile[] {
  const files: SourceFile[] = [];
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const abs = join(entry.parentPath, entry.name);
    files.push({ path: relative(SRC, abs).split('\\').join('/'), text: readFileSync(abs, 'utf8') });
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** The 1-based line of a character offset, for messages of the form `src/file.ts:12: what to do`. */
export function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
