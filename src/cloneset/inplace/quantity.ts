// Quantity comparison for the in-place engine (QoS class, resize completion). Pure.
import { parseQuantity, type Quantity } from '../../api/go-quantity.ts';

/** The parsed quantity, or undefined when Go's ParseQuantity would fail. */
export function tryParseQuantity(s: unknown): Quantity | undefined {
  if (typeof s === 'number') s = String(s);
  if (typeof s !== 'string') return undefined;
  try {
    return parseQuantity(s.trim());
  } catch {
    return undefined;
  }
}

/** Quantity.Cmp: -1, 0 or 1. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const scale = Math.min(a.scale, b.scale);
  const x = a.unscaled * 10n ** BigInt(a.scale - scale);
  const y = b.unscaled * 10n ** BigInt(b.scale - scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Two quantity strings denote the same amount (unparsable ones compare as text). */
export function sameQuantity(a: unknown, b: unknown): boolean {
  const qa = tryParseQuantity(a);
  const qb = tryParseQuantity(b);
  if (qa === undefined || qb === undefined) return a === b;
  return compareQuantities(qa, qb) === 0;
}

/** Two resource lists (name → quantity) hold the same amounts for the same names. */
export function sameResourceList(a: Readonly<Record<string, unknown>> | undefined, b: Readonly<Record<string, unknown>> | undefined): boolean {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b ?? {}).sort();
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => sameQuantity(a?.[k], b?.[k]));
}
