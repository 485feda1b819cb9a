// Kubernetes resource.Quantity as Go (k8s.io/apimachinery v0.32) reads and writes it: the exact string a
// typed JSON round-trip produces for a quantity. This matters because quantities are part of the bytes
// that are hashed into ControllerRevision names and into the volume-claim-template hash (docs/features.md#revisions;
// Kruise pkg/controller/cloneset/revision/cloneset_revision.go).
//
// Behaviour reproduced (written from the documented semantics, checked against the Go library):
// * parsing: optional sign, digits, optional fraction, suffix (n u m "" k M G T P E, Ki…Ei, or e/E<int>);
// * a parsed string that is already in canonical form is kept verbatim (Go caches it), which is why e.g.
//   "+1" survives but "1000" becomes "1k" and "1024Mi" becomes "1Gi";
// * values that do not fit the int64 fast path are rounded away from zero to nano units, binary values
//   are capped at 2^63-1;
// * canonical output: decimal mantissa with an exponent that is a multiple of 3 (DecimalSI suffix or
//   "e<n>"), or for BinarySI integers >= 1024 a base-1024 mantissa with Ki…Ei;
// * `roundUpMilli` = Go's RoundUp(-3) used by SetDefaults_ResourceList.

export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

export interface Quantity {
  /** The exact value is `unscaled × 10^scale`. */
  readonly unscaled: bigint;
  readonly scale: number;
  readonly format: QuantityFormat;
  /** The input string when Go keeps it (already canonical); it is what Go prints. */
  readonly cached?: string;
}

export class QuantityParseError extends Error {
  override readonly name = 'QuantityParseError';
}

const DEC_SUFFIX: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BIN_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DEC_SUFFIX_BY_EXP: ReadonlyMap<number, string> = new Map<number, string>(Object.entries(DEC_SUFFIX).map(([k, v]) => [v, k]));
const BIN_SUFFIX_BY_EXP: ReadonlyMap<number, string> = new Map<number, string>(Object.entries(BIN_SUFFIX).map(([k, v]) => [v, k]));

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

interface Pieces {
  readonly positive: boolean;
  /** sign + numerator + '.' + denominator, as written (without the suffix). */
  readonly value: string;
  readonly num: string;
  readonly denom: string;
  readonly suffix: string;
}

function splitQuantity(str: string): Pieces {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  let num = str.slice(pos, i);
  pos = i;
  if (num === '') num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    let j = pos;
    while (j < end && isDigit(str[j])) j++;
    denom = str.slice(pos, j);
    if (j >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = j;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  let k = pos;
  while (k < end && 'eEinumkKMGTP'.includes(str[k] ?? '')) k++;
  if (k >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  if (str[k] === '-' || str[k] === '+') k++;
  while (k < end && isDigit(str[k])) k++;
  if (k >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  throw new QuantityParseError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(str)}`);
}

function interpretSuffix(s: string): { base: 10 | 2; exponent: number; format: QuantityFormat } {
  const dec = DEC_SUFFIX[s];
  if (dec !== undefined && Object.hasOwn(DEC_SUFFIX, s)) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BIN_SUFFIX[s];
  if (bin !== undefined && Object.hasOwn(BIN_SUFFIX, s)) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E') && /^[+-]?\d+$/.test(s.slice(1))) {
    const n = BigInt(s.slice(1));
    if (n <= INT64_MAX && n >= INT64_MIN) {
      // Go truncates the int64 to int32.
      return { base: 10, exponent: Number(BigInt.asIntN(32, n)), format: 'DecimalExponent' };
    }
  }
  throw new QuantityParseError(`unable to parse quantity's suffix: ${JSON.stringify(s)}`);
}

/** Divide |v| by 10^digits rounding away from zero; returns the rounded value. */
function roundAwayFromZero(v: bigint, digits: number): bigint {
  if (digits <= 0) return v * 10n ** BigInt(-digits);
  const d = 10n ** BigInt(digits);
  const neg = v < 0n;
  const a = neg ? -v : v;
  let q = a / d;
  if (q * d !== a) q += 1n;
  return neg ? -q : q;
}

/** Go's resource.ParseQuantity. Throws QuantityParseError where Go returns an error. */
export function parseQuantity(input: string): Quantity {
  if (input.length === 0) throw new QuantityParseError('quantities must match the regular expression');
  if (input === '0') return { unscaled: 0n, scale: 0, format: 'DecimalSI', cached: '0' };
  const p = splitQuantity(input);
  const { base, exponent, format: parsedFormat } = interpretSuffix(p.suffix);
  let format = parsedFormat;

  // The int64 fast path.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && p.denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - p.num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = 18 - (p.num.length + p.denom.length);
  }
  if (precision >= 0) {
    scale -= p.denom.length;
    if (scale >= -9) {
      const shifted = p.num + p.denom;
      const value = BigInt(shifted);
      if (value > INT64_MAX) throw new QuantityParseError('quantity is too large');
      const product = value * mantissa;
      if (product <= INT64_MAX) {
        const result = p.positive ? product : -product;
        let canonical: boolean;
        if (format === 'BinarySI') canonical = exponent % 10 === 0 && (value & 7n) !== 0n;
        else canonical = scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return canonical ? { unscaled: result, scale, format, cached: input } : { unscaled: result, scale, format };
      }
    }
  }

  // The arbitrary-precision path.
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(p.value);
  if (m === null || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) throw new QuantityParseError('unable to parse quantity');
  const digits = (m[2] ?? '') + (m[3] ?? '');
  let unscaled = BigInt(digits === '' ? '0' : digits) * (m[1] === '-' ? -1n : 1n);
  let dscale = -(m[3] ?? '').length;
  if (base === 10) dscale += exponent;
  else unscaled *= 1n << BigInt(exponent);
  const negative = unscaled < 0n;
  if (negative) unscaled = -unscaled;
  if (unscaled !== 0n && dscale < -9) {
    unscaled = roundAwayFromZero(unscaled, -9 - dscale);
    dscale = -9;
  }
  if (format === 'BinarySI' && compareScaled(unscaled, dscale, INT64_MAX, 0) > 0) {
    unscaled = INT64_MAX;
    dscale = 0;
  }
  if (format === 'BinarySI' && unscaled > 0n && compareScaled(unscaled, dscale, 1n, 0) < 0) format = 'DecimalSI';
  if (negative) unscaled = -unscaled;
  return { unscaled, scale: dscale, format };
}

function compareScaled(a: bigint, as: number, b: bigint, bs: number): number {
  const s = Math.min(as, bs);
  const x = a * 10n ** BigInt(as - s);
  const y = b * 10n ** BigInt(bs - s);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Go's Quantity.RoundUp(-3) (SetDefaults_ResourceList). */
export function roundUpMilli(q: Quantity): Quantity {
  if (q.scale >= -3) return q;
  return { unscaled: roundAwayFromZero(q.unscaled, -3 - q.scale), scale: -3, format: q.format };
}

/** Go's Quantity.String() / MarshalJSON text. */
export function formatQuantity(q: Quantity): string {
  if (q.cached !== undefined) return q.cached;
  if (q.unscaled === 0n) return '0';
  let format = q.format;
  let integer: bigint | undefined;
  if (format === 'BinarySI') {
    if (compareScaled(q.unscaled, q.scale, -1024n, 0) > 0 && compareScaled(q.unscaled, q.scale, 1024n, 0) < 0) {
      format = 'DecimalSI';
    } else if (q.scale >= 0) {
      integer = q.unscaled * 10n ** BigInt(q.scale);
    } else {
      const d = 10n ** BigInt(-q.scale);
      if (q.unscaled % d === 0n) integer = q.unscaled / d;
      else format = 'DecimalSI';
    }
  }
  if (format === 'BinarySI' && integer !== undefined) {
    let amount = integer;
    let exp = 0;
    while ((amount >= 1024n || amount <= -1024n) && amount % 1024n === 0n) {
      amount /= 1024n;
      exp++;
    }
    return `${amount}${BIN_SUFFIX_BY_EXP.get(exp * 10) ?? ''}`;
  }
  let amount = q.unscaled;
  let exponent = q.scale;
  while ((amount >= 10n || amount <= -10n) && amount % 10n === 0n) {
    amount /= 10n;
    exponent++;
  }
  while (exponent % 3 !== 0) {
    amount *= 10n;
    exponent--;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
  return `${amount}${DEC_SUFFIX_BY_EXP.get(exponent) ?? ''}`;
}

/** parse → print, i.e. what a Go typed JSON round-trip does to a quantity string. */
export function canonicalQuantity(s: string): string {
  return formatQuantity(parseQuantity(s.trim()));
}

/** parse → RoundUp(-3) → print (a quantity after SetDefaults_ResourceList). */
export function defaultedQuantity(s: string): string {
  return formatQuantity(roundUpMilli(parseQuantity(s.trim())));
}
