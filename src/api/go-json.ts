// Go encoding/json emulation, byte-exact where the controller needs it (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go):
//
// * `goMarshal(value)` — json.Marshal of a generic value (map[string]interface{} & co.): object keys
//   sorted by byte order at every level, no whitespace, numbers printed like a Go float64, strings escaped
//   like Go (HTML-safe `\u003c \u003e \u0026`, `\u2028 \u2029`, `\b \f \n \r \t`, other control characters
//   as `\u00XX`, lone surrogates as `\ufffd`).
// * `goTypedMarshal(value, typeName)` — what Go does when it decodes JSON into a typed struct and marshals
//   it again: unknown fields dropped (field names matched case-sensitively, as the Kubernetes decoder
//   sigs.k8s.io/json does), zero values of `omitempty` fields omitted, non-omitempty fields always present
//   (`"creationTimestamp":null`, `"resources":{}`, `"containers":null`…), quantities canonicalised,
//   timestamps normalised to UTC seconds. Struct fields come out in declaration order, map keys sorted.
//   The struct tables are in go-types-core-v1.ts (k8s.io/api v0.32, everything reachable from
//   PodTemplateSpec and PersistentVolumeClaim).
// * FNV-1 / FNV-1a 32-bit hashes and the go-spew `%#v` rendering of a byte slice.
import { GO_STRUCTS } from './go-types-core-v1.ts';
import { canonicalQuantity, QuantityParseError } from './go-quantity.ts';

// ---------------------------------------------------------------------------------------------------
// Strings and numbers

const HEX = '0123456789abcdef';

/** A Go JSON string literal (encoding/json with HTML escaping, the default of json.Marshal). */
export function goQuote(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string | undefined;
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
      switch (c) {
        case 0x22:
          rep = '\\"';
          break;
        case 0x5c:
          rep = '\\\\';
          break;
        case 0x08:
          rep = '\\b';
          break;
        case 0x0c:
          rep = '\\f';
          break;
        case 0x0a:
          rep = '\\n';
          break;
        case 0x0d:
          rep = '\\r';
          break;
        case 0x09:
          rep = '\\t';
          break;
        default:
          rep = `\\u00${HEX[c >> 4] ?? '0'}${HEX[c & 0xf] ?? '0'}`;
      }
    } else if (c === 0x2028 || c === 0x2029) {
      rep = c === 0x2028 ? '\\u2028' : '\\u2029';
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = s.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a valid pair: copied as is
        continue;
      }
      rep = '\\ufffd'; // Go sees invalid UTF-8 / an unpaired surrogate: U+FFFD
    }
    if (rep !== undefined) {
      out += s.slice(start, i) + rep;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}

/** A float64 printed by encoding/json. */
export function goFloat(n: number): string {
  if (!Number.isFinite(n)) throw new GoJsonError(`json: unsupported value: ${n}`);
  if (Object.is(n, -0)) return '-0';
  // JavaScript and Go agree on the shortest round-trip digits and on the thresholds (1e-6, 1e21) for
  // switching to exponent form; Go writes "e-07" where JS writes "e-7" but then trims the zero itself.
  return String(n);
}

/** Byte-order (UTF-8) comparison of two strings, i.e. code point order. */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

export class GoJsonError extends Error {
  override readonly name = 'GoJsonError';
}

const isPlainObject = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** json.Marshal of a generic value (as Go holds it after json.Unmarshal into interface{}). */
export function goMarshal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return goQuote(value);
    case 'number':
      return goFloat(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v: unknown) => goMarshal(v)).join(',')}]`;
      const obj = value as Readonly<Record<string, unknown>>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort(compareUtf8);
      return `{${keys.map((k) => `${goQuote(k)}:${goMarshal(obj[k])}`).join(',')}}`;
    }
    default:
      throw new GoJsonError(`json: unsupported type: ${typeof value}`);
  }
}

/** Like goMarshal but keeps the object key order of the value (json.Compact of raw bytes). */
function goCompactInOrder(value: unknown): string {
  if (isPlainObject(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined);
    return `{${keys.map((k) => `${goQuote(k)}:${goCompactInOrder(value[k])}`).join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map((v: unknown) => goCompactInOrder(v)).join(',')}]`;
  return goMarshal(value);
}

// ---------------------------------------------------------------------------------------------------
// Typed round-trip

/**
 * Type grammar of the struct tables: `s` string, `b` bool, `i32`/`i64` integers, `T` metav1.Time,
 * `Q` resource.Quantity, `IOS` intstr.IntOrString, `RAW` raw JSON (metav1.FieldsV1), `*X` pointer,
 * `[X]` slice, `{X}` map with string keys, any other word a struct of the table.
 */
export type GoTypeNode =
  | { readonly k: 's' | 'b' | 'i32' | 'i64' | 'T' | 'Q' | 'IOS' | 'RAW' }
  | { readonly k: 'ptr' | 'slice' | 'map'; readonly elem: GoTypeNode }
  | { readonly k: 'struct'; readonly name: string };

interface GoField {
  readonly name: string;
  readonly type: GoTypeNode;
  readonly omitempty: boolean;
}

function parseTypeNode(src: string): GoTypeNode {
  if (src.startsWith('*')) return { k: 'ptr', elem: parseTypeNode(src.slice(1)) };
  if (src.startsWith('[') && src.endsWith(']')) return { k: 'slice', elem: parseTypeNode(src.slice(1, -1)) };
  if (src.startsWith('{') && src.endsWith('}')) return { k: 'map', elem: parseTypeNode(src.slice(1, -1)) };
  switch (src) {
    case 's':
    case 'b':
    case 'i32':
    case 'i64':
    case 'T':
    case 'Q':
    case 'IOS':
    case 'RAW':
      return { k: src };
    default:
      if (!Object.hasOwn(GO_STRUCTS, src)) throw new Error(`go-json: unknown struct ${src}`);
      return { k: 'struct', name: src };
  }
}

function parseStruct(spec: readonly string[]): readonly GoField[] {
  return spec.map((f): GoField => {
    const colon = f.indexOf(':');
    const omitempty = f.endsWith('?');
    return { name: f.slice(0, colon), type: parseTypeNode(f.slice(colon + 1, omitempty ? -1 : undefined)), omitempty };
  });
}

/** Every struct of the table, parsed once when the module loads: a constant, not a cache filled while reconciling. */
const STRUCT_FIELDS: ReadonlyMap<string, readonly GoField[]> = new Map(Object.entries(GO_STRUCTS).map(([name, spec]) => [name, parseStruct(spec)]));

function structFields(name: string): readonly GoField[] {
  const fields = STRUCT_FIELDS.get(name);
  if (fields === undefined) throw new Error(`go-json: unknown struct ${name}`);
  return fields;
}

/** The JSON field names of a struct of the table, in declaration order. */
export function goStructFieldNames(name: string): readonly string[] {
  return structFields(name).map((f) => f.name);
}

interface Encoded {
  readonly json: string;
  readonly empty: boolean;
}

function fail(path: string, msg: string): never {
  throw new GoJsonError(`json: ${msg} at ${path === '' ? '<root>' : path}`);
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** metav1.Time: RFC 3339 in, UTC seconds out; the zero time prints as null. */
function encodeTime(v: string, path: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(v);
  if (m === null) fail(path, `cannot parse ${JSON.stringify(v)} as RFC 3339 time`);
  const [year, month, day, hour, min, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const dim = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > dim || hour > 23 || min > 59 || sec > 59) {
    fail(path, `time ${JSON.stringify(v)} is out of range`);
  }
  let offsetMin = 0;
  const zone = m[8] ?? 'Z';
  if (zone !== 'Z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 24 || om > 60) fail(path, `time ${JSON.stringify(v)} has an invalid zone offset`);
    offsetMin = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, min - offsetMin, sec, 0);
  const fraction = m[7] !== undefined && /[1-9]/.test(m[7]);
  const y = d.getUTCFullYear();
  if (y === 1 && d.getUTCMonth() === 0 && d.getUTCDate() === 1 && d.getUTCHours() === 0 && d.getUTCMinutes() === 0 && d.getUTCSeconds() === 0 && !fraction) {
    return 'null';
  }
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const yyyy = y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0');
  return `"${yyyy}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}Z"`;
}

function encodeInt(v: unknown, bits: 32 | 64, path: string): Encoded {
  if (v === undefined || v === null) return { json: '0', empty: true };
  if (typeof v !== 'number') fail(path, `cannot unmarshal ${describe(v)} into Go value of type int${bits}`);
  if (!Number.isInteger(v)) fail(path, `cannot unmarshal number ${v} into Go value of type int${bits}`);
  const n = BigInt(v);
  const limit = bits === 32 ? 1n << 31n : 1n << 63n;
  if (n < -limit || n >= limit) fail(path, `cannot unmarshal number ${v} into Go value of type int${bits}`);
  return { json: n.toString(), empty: n === 0n };
}

function encodeValue(v: unknown, t: GoTypeNode, path: string): Encoded {
  switch (t.k) {
    case 's':
      if (v === undefined || v === null) return { json: '""', empty: true };
      if (typeof v !== 'string') fail(path, `cannot unmarshal ${describe(v)} into Go value of type string`);
      return { json: goQuote(v), empty: v === '' };
    case 'b':
      if (v === undefined || v === null) return { json: 'false', empty: true };
      if (typeof v !== 'boolean') fail(path, `cannot unmarshal ${describe(v)} into Go value of type bool`);
      return { json: v ? 'true' : 'false', empty: !v };
    case 'i32':
      return encodeInt(v, 32, path);
    case 'i64':
      return encodeInt(v, 64, path);
    case 'T':
      // A struct: never "empty" for omitempty; the zero time prints as null.
      if (v === undefined || v === null) return { json: 'null', empty: false };
      if (typeof v !== 'string') fail(path, `cannot unmarshal ${describe(v)} into Go value of type string`);
      return { json: encodeTime(v, path), empty: false };
    case 'Q': {
      if (v === undefined || v === null) return { json: '"0"', empty: false };
      if (typeof v !== 'string' && typeof v !== 'number') fail(path, `cannot unmarshal ${describe(v)} into a quantity`);
      try {
        return { json: goQuote(canonicalQuantity(String(v))), empty: false };
      } catch (e) {
        if (e instanceof QuantityParseError) fail(path, e.message);
        throw e;
      }
    }
    case 'IOS':
      if (v === undefined || v === null) return { json: '0', empty: false };
      if (typeof v === 'string') return { json: goQuote(v), empty: false };
      if (typeof v === 'number') return { json: encodeInt(v, 32, path).json, empty: false };
      return fail(path, `cannot unmarshal ${describe(v)} into Go value of type int32`);
    case 'RAW':
      if (v === undefined || v === null) return { json: 'null', empty: true };
      return { json: goCompactInOrder(v), empty: false };
    case 'ptr':
      if (v === undefined || v === null) return { json: 'null', empty: true };
      return { json: encodeValue(v, t.elem, path).json, empty: false };
    case 'slice': {
      if (v === undefined || v === null) return { json: 'null', empty: true };
      if (!Array.isArray(v)) fail(path, `cannot unmarshal ${describe(v)} into Go value of type slice`);
      const items = (v as readonly unknown[]).map((e, i) => encodeValue(e, t.elem, `${path}[${i}]`).json);
      return { json: `[${items.join(',')}]`, empty: items.length === 0 };
    }
    case 'map': {
      if (v === undefined || v === null) return { json: 'null', empty: true };
      if (!isPlainObject(v)) fail(path, `cannot unmarshal ${describe(v)} into Go value of type map`);
      const keys = Object.keys(v).sort(compareUtf8);
      const entries = keys.map((k) => `${goQuote(k)}:${encodeValue(v[k], t.elem, `${path}.${k}`).json}`);
      return { json: `{${entries.join(',')}}`, empty: keys.length === 0 };
    }
    case 'struct': {
      if (v !== undefined && v !== null && !isPlainObject(v)) {
        fail(path, `cannot unmarshal ${describe(v)} into Go struct ${t.name}`);
      }
      const obj: Readonly<Record<string, unknown>> = isPlainObject(v) ? v : {};
      const parts: string[] = [];
      for (const f of structFields(t.name)) {
        const fv = Object.hasOwn(obj, f.name) ? obj[f.name] : undefined;
        const enc = encodeValue(fv, f.type, path === '' ? f.name : `${path}.${f.name}`);
        if (f.omitempty && enc.empty) continue;
        parts.push(`${goQuote(f.name)}:${enc.json}`);
      }
      return { json: `{${parts.join(',')}}`, empty: false };
    }
  }
}

/**
 * The bytes Go's json.Marshal produces after json.Unmarshal of `value` into the named struct
 * (e.g. 'PodTemplateSpec', 'PersistentVolumeClaim'). Throws GoJsonError where Go's decoder fails
 * (wrong JSON type, non-integer or out-of-range number, unparsable quantity or time).
 */
export function goTypedMarshal(value: unknown, structName: string): string {
  return encodeValue(value, parseTypeNode(structName), '').json;
}

/**
 * The typed round-trip repeated until it no longer changes anything, as JSON text. A Kruise-managed object
 * goes through several such round-trips before the controller hashes it (mutating webhook, conversion to
 * the storage version, the controller's own decode), and a few inputs need more than one to settle: a
 * pointer to the zero time prints as null, which decodes as nil, which is then omitted.
 */
export function goTypedMarshalStable(value: unknown, structName: string): string {
  let text = goTypedMarshal(value, structName);
  for (let i = 0; i < 4; i++) {
    const next = goTypedMarshal(JSON.parse(text), structName);
    if (next === text) break;
    text = next;
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------
// Hashes

const utf8 = new TextEncoder();

export function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? utf8.encode(data) : data;
}

/** FNV-1 32-bit (multiply, then xor) over the concatenated inputs. */
export function fnv1_32(...parts: readonly (string | Uint8Array)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    for (const b of toBytes(part)) {
      h = Math.imul(h, 0x01000193) >>> 0;
      h = (h ^ b) >>> 0;
    }
  }
  return h >>> 0;
}

/** FNV-1a 32-bit (xor, then multiply) over the concatenated inputs. */
export function fnv1a_32(...parts: readonly (string | Uint8Array)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    for (const b of toBytes(part)) {
      h = (h ^ b) >>> 0;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return h >>> 0;
}

/** go-spew's `%#v` rendering of a []byte: `([]uint8)[b0 b1 …]`, bytes in decimal. */
export function spewByteSlice(data: string | Uint8Array): string {
  return `([]uint8)[${Array.from(toBytes(data)).join(' ')}]`;
}
