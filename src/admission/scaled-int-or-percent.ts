// Kruise's util.GetScaledValueFromIntOrPercent (pkg/util/tools.go in openkruise/kruise), the parser its
// CloneSet validation uses for partition, maxUnavailable and maxSurge: an integer is itself; a string must
// end in '%' and its number may have decimals ("12.5%"), scaled against `total` and rounded up or down. A
// numeric string without '%' ("5") is an error. The error texts are Kruise's. Pure.

export type Scaled = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly error: string };

/** Go's strconv.ParseFloat error text for input it rejects. */
function parseFloatError(s: string): string {
  return `strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`;
}

export function scaledValueFromIntOrPercent(v: unknown, total: number, roundUp: boolean): Scaled {
  if (v === undefined || v === null) return { ok: false, error: 'nil value for IntOrString' };
  if (typeof v === 'number') return { ok: true, value: Math.trunc(v) };
  if (typeof v !== 'string') return { ok: false, error: 'invalid value for IntOrString: invalid type: neither int nor percentage' };
  if (!v.endsWith('%')) return { ok: false, error: 'invalid value for IntOrString: invalid type: string is not a percentage' };
  const num = v.slice(0, -1);
  // Go's ParseFloat also takes "Inf", "NaN" and hex floats; none of them is a meaningful percentage.
  if (!/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(num)) {
    return { ok: false, error: `invalid value for IntOrString: invalid value ${JSON.stringify(v)}: ${parseFloatError(num)}` };
  }
  const scaled = (Number(num) * total) / 100;
  const value = roundUp ? Math.ceil(scaled) : Math.floor(scaled);
  if (!Number.isFinite(value)) return { ok: false, error: `invalid value for IntOrString: invalid value ${JSON.stringify(v)}: value out of range` };
  return { ok: true, value: value === 0 ? 0 : value };
}
