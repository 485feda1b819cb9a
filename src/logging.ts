// The process logger: pino writing to stderr (as every Kubernetes component does), in one of two formats.
//   json  one object a line, ISO-8601 `time`, `level` as a word: what log pipelines parse (the image's default);
//   text  `2026-01-02T03:04:05.678Z INFO  message key=value …`: what a person at a terminal reads (the default when
//         stderr is a terminal).
import { pino, stdTimeFunctions, type Logger } from 'pino';

export type LogFormat = 'json' | 'text';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

export interface LoggerOptions {
  readonly level: string;
  readonly format: LogFormat;
  readonly component: string;
  /** Where lines go (process.stderr; tests pass a collector). */
  readonly write: (line: string) => void;
}

/** --log-format's default: text for a terminal, json for everything else (files, pipes, containers). */
export function defaultLogFormat(stderrIsTTY: boolean): LogFormat {
  return stderrIsTTY ? 'text' : 'json';
}

const LEVEL_WIDTH = 5;
/** Fields every line has, shown in the text format's first columns instead of as key=value pairs. */
const SHOWN = new Set(['time', 'level', 'msg', 'component', 'pid', 'hostname']);

function textValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v);
}

/** One JSON line as pino writes it → one text line. A line that does not parse is passed through as it is. */
export function toTextLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof entry.time === 'string' ? entry.time : '';
  const level = (typeof entry.level === 'string' ? entry.level : '').toUpperCase().padEnd(LEVEL_WIDTH);
  const fields = Object.entries(entry)
    .filter(([k]) => !SHOWN.has(k))
    .map(([k, v]) => `${k}=${textValue(v)}`);
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  return `${time} ${level} ${msg}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}\n`;
}

export function createLogger(o: LoggerOptions): Logger {
  const options = {
    level: o.level,
    base: { component: o.component },
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const write = o.format === 'text' ? (line: string): void => o.write(toTextLine(line)) : o.write;
  return pino(options, { write });
}

/**
 * A `write` that passes on the lines of one event-loop turn as one chunk, at the end of the turn (setImmediate),
 * and every line still held when the process exits. process.stderr on a pipe or a file writes synchronously, one
 * system call per line: the controller logs a line per API write, and answers arrive in bursts (64 writes in
 * flight), so most lines share a turn with others. Nothing waits longer than the turn that logged it.
 */
export function coalescedWrite(write: (chunk: string) => void, defer: (flush: () => void) => void = setImmediate): { write: (line: string) => void; flush: () => void } {
  let held: string[] = [];
  const flush = (): void => {
    if (held.length === 0) return;
    const lines = held;
    held = [];
    write(lines.length === 1 ? (lines[0] ?? '') : lines.join(''));
  };
  return {
    write: (line) => {
      if (held.push(line) === 1) defer(flush);
    },
    flush,
  };
}
