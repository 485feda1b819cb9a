/**
 * A small TypeScript lexer for the architecture test: enough to find every module a file depends on
 * (static imports, `import type`, `export … from`, dynamic `import('…')`, `typeof import('…')`) and the
 * identifiers a pure module must not use, without being fooled by strings, comments, template literals
 * or regular expressions. (The `typescript` devDependency is the Go-based compiler since 7.0; its JS API is
 * "unstable" and runs the compiler as a child process, too heavy for a unit test.)
 */

export type TokenKind = 'ident' | 'string' | 'template' | 'number' | 'punct' | 'regex';

export interface Token {
  readonly kind: TokenKind;
  /** Identifier name, punctuation text, or the decoded value of a plain string literal. */
  readonly text: string;
  /** 1-based line of the token's first character. */
  readonly line: number;
  /** Nesting depth of `{ ( [` (and `${`) before this token: 0 = a module-level statement. */
  readonly depth: number;
}

export type ImportKind = 'import' | 'export-from' | 'dynamic' | 'side-effect';

export interface ImportRef {
  readonly specifier: string;
  readonly line: number;
  readonly kind: ImportKind;
  /** Erased at run time: `import type`, `export type … from`, every named binding `type`, or `typeof import()`. */
  readonly typeOnly: boolean;
  /** The names taken from the module: named bindings as exported (`{ a as b }` → a), `default`, or `*`. */
  readonly names: readonly string[];
}

/** Keywords after which a `/` starts a regular expression, not a division. */
const REGEX_AFTER_KEYWORD = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

const isIdentStart = (c: string): boolean => /[A-Za-z_$\u00a0-\uffff]/.test(c);
const isIdentPart = (c: string): boolean => /[A-Za-z0-9_$\u00a0-\uffff]/.test(c);

const PUNCT3 = ['===', '!==', '**=', '...', '<<=', '>>=', '>>>', '&&=', '||=', '??='];
const PUNCT2 = ['=>', '==', '!=', '<=', '>=', '&&', '||', '??', '?.', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '**', '<<', '>>'];

/** Splits TypeScript source into tokens; comments and whitespace are dropped. Throws on an unterminated literal. */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let depth = 0;
  // One entry per open bracket: true when it was the `${` of a template literal, whose `}` resumes the template.
  const brackets: boolean[] = [];

  const push = (kind: TokenKind, text: string, startLine: number, d: number = depth): void => {
    tokens.push({ kind, text, line: startLine, depth: d });
  };
  const regexAllowed = (): boolean => {
    const prev = tokens[tokens.length - 1];
    if (prev === undefined) return true;
    if (prev.kind === 'ident') return REGEX_AFTER_KEYWORD.has(prev.text);
    if (prev.kind === 'punct') return ![')', ']', '}'].includes(prev.text);
    return false;
  };
  /** Reads a template literal's text from i (just after "`" or "}") up to "`" or "${". */
  const readTemplateChunk = (startLine: number): void => {
    let text = '';
    for (;;) {
      const c = src[i];
      if (c === undefined) throw new Error(`unterminated template literal starting on line ${startLine}`);
      if (c === '\\') {
        text += src.slice(i, i + 2);
        if (src[i + 1] === '\n') line++;
        i += 2;
        continue;
      }
      if (c === '`') {
        i++;
        push('template', text, startLine);
        return;
      }
      if (c === '$' && src[i + 1] === '{') {
        i += 2;
        push('template', text, startLine);
        brackets.push(true);
        depth++;
        return;
      }
      if (c === '\n') line++;
      text += c;
      i++;
    }
  };

  while (i < src.length) {
    const c = src[i] ?? '';
    const next = src[i + 1] ?? '';
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '/' && next === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end < 0) throw new Error(`unterminated comment starting on line ${line}`);
      for (let j = i; j < end; j++) if (src[j] === '\n') line++;
      i = end + 2;
      continue;
    }
    if (c === '#' && next === '!' && i === 0) {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const startLine = line;
      let text = '';
      i++;
      for (;;) {
        const d = src[i];
        if (d === undefined || d === '\n') throw new Error(`unterminated string starting on line ${startLine}`);
        i++;
        if (d === c) break;
        if (d === '\\') {
          const e = src[i] ?? '';
          i++;
          if (e === '\n') line++;
          text += e === 'n' ? '\n' : e === 't' ? '\t' : e;
          continue;
        }
        text += d;
      }
      push('string', text, startLine);
      continue;
    }
    if (c === '`') {
      i++;
      readTemplateChunk(line);
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(next))) {
      const start = i;
      while (i < src.length && /[0-9A-Za-z_.]/.test(src[i] ?? '')) i++;
      push('number', src.slice(start, i), line);
      continue;
    }
    if (isIdentStart(c)) {
      const start = i;
      while (i < src.length && isIdentPart(src[i] ?? '')) i++;
      push('ident', src.slice(start, i), line);
      continue;
    }
    if (c === '/' && regexAllowed()) {
      const startLine = line;
      const start = i;
      let inClass = false;
      i++;
      for (;;) {
        const d = src[i];
        if (d === undefined || d === '\n') throw new Error(`unterminated regular expression starting on line ${startLine}`);
        i++;
        if (d === '\\') i++;
        else if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) break;
      }
      while (i < src.length && /[a-z]/.test(src[i] ?? '')) i++;
      push('regex', src.slice(start, i), startLine);
      continue;
    }
    if (c === '{' || c === '(' || c === '[') {
      push('punct', c, line);
      brackets.push(false);
      depth++;
      i++;
      continue;
    }
    if (c === '}' || c === ')' || c === ']') {
      const wasTemplate = brackets.pop() ?? false;
      depth = Math.max(0, depth - 1);
      i++;
      if (wasTemplate && c === '}') readTemplateChunk(line);
      else push('punct', c, line);
      continue;
    }
    const three = src.slice(i, i + 3);
    const two = src.slice(i, i + 2);
    const p = PUNCT3.includes(three) ? three : PUNCT2.includes(two) ? two : c;
    push('punct', p, line);
    i += p.length;
  }
  return tokens;
}

/** Every module specifier the file refers to, in source order. */
export function findImports(tokens: readonly Token[]): ImportRef[] {
  const refs: ImportRef[] = [];
  const at = (k: number): Token | undefined => tokens[k];
  const isPunct = (k: number, text: string): boolean => at(k)?.kind === 'punct' && at(k)?.text === text;
  const isIdent = (k: number, text: string): boolean => at(k)?.kind === 'ident' && at(k)?.text === text;

  /**
   * Reads an import/export clause from k up to `from '<spec>'`; returns the specifier, whether every
   * named binding is `type`, and the index after the specifier. Undefined when there is no `from`
   * (e.g. `export const x = …`).
   */
  const readClause = (k: number): { spec: Token; allNamedTypes: boolean; names: string[]; end: number } | undefined => {
    let named = 0;
    let typedNamed = 0;
    let hasDefaultOrStar = false;
    const names: string[] = [];
    for (let j = k; j < tokens.length; j++) {
      const t = at(j);
      if (t === undefined) return undefined;
      if (t.kind === 'punct' && t.text === '{') {
        // A braced list of bindings: count how many are marked `type`.
        let expectName = true;
        for (j = j + 1; j < tokens.length && !isPunct(j, '}'); j++) {
          if (isPunct(j, ',')) {
            expectName = true;
            continue;
          }
          if (expectName) {
            named++;
            // `type X` / `X` / `X as Y`: the exported name is the first identifier that is not the `type` modifier.
            const first = isIdent(j, 'type') && at(j + 1)?.kind === 'ident' && !isPunct(j + 1, ',') ? at(j + 1) : at(j);
            if (first !== undefined) names.push(first.text);
            if (isIdent(j, 'type') && at(j + 1)?.kind === 'ident' && !isIdent(j + 1, 'as')) typedNamed++;
            // `type as as X` / `type as` name the binding `as`; `type as X` renames a value named `type`.
            else if (isIdent(j, 'type') && isIdent(j + 1, 'as') && (isIdent(j + 2, 'as') || isPunct(j + 2, ',') || isPunct(j + 2, '}'))) typedNamed++;
            expectName = false;
          }
        }
        // Only `from` may follow a braced list; anything else is `export { a };` (no module).
        if (!isIdent(j + 1, 'from')) return undefined;
        continue;
      }
      if (t.kind === 'ident' && t.text === 'from' && at(j + 1)?.kind === 'string') {
        const spec = at(j + 1);
        if (spec === undefined) return undefined;
        return { spec, allNamedTypes: !hasDefaultOrStar && named > 0 && typedNamed === named, names, end: j + 2 };
      }
      if (t.kind === 'punct' && t.text === '*') {
        hasDefaultOrStar = true;
        names.push('*');
        continue;
      }
      if (t.kind === 'ident' && t.text !== 'as') {
        // A default import's local name, or the local name after `* as`.
        if (!isPunct(j - 1, '*') && !isIdent(j - 1, 'as')) names.push('default');
        hasDefaultOrStar = true;
        continue;
      }
      if (t.kind === 'punct' && t.text === ',') continue;
      if (t.kind === 'ident') continue;
      return undefined;
    }
    return undefined;
  };

  for (let k = 0; k < tokens.length; k++) {
    const t = at(k);
    if (t === undefined || t.kind !== 'ident') continue;
    const prev = at(k - 1);
    const afterDot = prev?.kind === 'punct' && (prev.text === '.' || prev.text === '?.');
    if (afterDot) continue;
    if (t.text === 'import') {
      if (isPunct(k + 1, '.')) continue; // import.meta
      if (isPunct(k + 1, '(')) {
        const spec = at(k + 2);
        if (spec?.kind === 'string') {
          refs.push({ specifier: spec.text, line: spec.line, kind: 'dynamic', typeOnly: isIdent(k - 1, 'typeof'), names: ['*'] });
        }
        continue;
      }
      const first = at(k + 1);
      if (first?.kind === 'string') {
        refs.push({ specifier: first.text, line: first.line, kind: 'side-effect', typeOnly: false, names: [] });
        continue;
      }
      const typeKeyword = isIdent(k + 1, 'type') && !isIdent(k + 2, 'from') && !isPunct(k + 2, ',');
      const clause = readClause(typeKeyword ? k + 2 : k + 1);
      if (clause === undefined) continue;
      refs.push({ specifier: clause.spec.text, line: clause.spec.line, kind: 'import', typeOnly: typeKeyword || clause.allNamedTypes, names: clause.names });
      k = clause.end - 1;
      continue;
    }
    if (t.text === 'export') {
      const typeKeyword = isIdent(k + 1, 'type') && (isPunct(k + 2, '{') || isPunct(k + 2, '*'));
      const start = typeKeyword ? k + 2 : k + 1;
      if (!isPunct(start, '{') && !isPunct(start, '*')) continue;
      const clause = readClause(start);
      if (clause === undefined) continue;
      refs.push({ specifier: clause.spec.text, line: clause.spec.line, kind: 'export-from', typeOnly: typeKeyword || clause.allNamedTypes, names: clause.names });
      k = clause.end - 1;
    }
  }
  return refs;
}
