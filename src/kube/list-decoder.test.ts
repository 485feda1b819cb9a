import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ListDecoder } from './list-decoder.ts';

/** `text` fed to a decoder cut at `cuts` (offsets, any order), as socket chunks would arrive. */
function decodeInChunks<T>(text: string, cuts: readonly number[], map?: (item: T) => T): unknown {
  const decoder = new ListDecoder<T>(map);
  let from = 0;
  for (const at of [...new Set(cuts)].sort((a, b) => a - b)) {
    decoder.write(text.slice(from, at));
    from = at;
  }
  decoder.write(text.slice(from));
  return decoder.end();
}

const POD_LIST = {
  kind: 'PodList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ' },
  items: [
    { metadata: { name: 'a', labels: { 'x]': '{"items":[' } }, status: { phase: 'Running' } },
    { metadata: { name: 'b\\"}]', annotations: { note: 'é ✓ \u0000 \\\\' } }, spec: { containers: [{ name: 'c', args: ['[', ']', '{', '}'] }] } },
  ],
};

describe('ListDecoder', () => {
  it('decodes a list answer to what JSON.parse makes of it, items mapped in order', () => {
    const text = JSON.stringify(POD_LIST);
    const decoded = decodeInChunks<{ metadata: { name: string } }>(text, [], (p) => ({ metadata: { name: p.metadata.name.toUpperCase() } }));
    assert.deepEqual(decoded, { ...POD_LIST, items: [{ metadata: { name: 'A' } }, { metadata: { name: 'B\\"}]' } }] });
  });

  it('decodes the same list whatever the chunks it arrives in, one character at a time included', () => {
    const text = JSON.stringify(POD_LIST);
    assert.deepEqual(
      decodeInChunks(
        text,
        Array.from({ length: text.length }, (_, i) => i),
      ),
      POD_LIST,
    );
  });

  it('keeps the list metadata wherever it comes in the object, before or after the items', () => {
    const text = `{"items":[{"n":1}],"metadata":{"resourceVersion":"7"},"kind":"ConfigMapList"}`;
    assert.deepEqual(decodeInChunks(text, [5, 11, 18]), { items: [{ n: 1 }], metadata: { resourceVersion: '7' }, kind: 'ConfigMapList' });
  });

  it('reads whitespace between the tokens, an empty list and a list whose items are null', () => {
    assert.deepEqual(decodeInChunks('{ "metadata" : {} ,\n "items" : [ {"n":1} ,\n\t{"n":2} ] }', [3, 30]), { metadata: {}, items: [{ n: 1 }, { n: 2 }] });
    assert.deepEqual(decodeInChunks('{"metadata":{},"items":[]}', [24]), { metadata: {}, items: [] });
    assert.deepEqual(decodeInChunks('{"metadata":{},"items":null}', []), { metadata: {}, items: [] });
  });

  it('takes only the top-level "items": an "items" key inside an item or the metadata stays in its object', () => {
    const text = '{"metadata":{"items":[1]},"items":[{"items":[{"n":1}]}]}';
    assert.deepEqual(decodeInChunks(text, [20]), { metadata: { items: [1] }, items: [{ items: [{ n: 1 }] }] });
  });

  it('rejects an element of "items" that is not an object', () => {
    for (const items of ['[1]', '["a"]', '[null]', '[[]]', '[{"n":1} x]']) {
      assert.throws(() => decodeInChunks(`{"metadata":{},"items":${items}}`, []), /an element of "items" is not an object/, items);
    }
  });

  it('rejects text that ends inside the list, and text that is not JSON', () => {
    assert.throws(() => decodeInChunks('{"metadata":{},"items":[{"n":1}', []), /ended inside the object/);
    assert.throws(() => decodeInChunks('{"metadata":{},"items":[{"n":1}]', []), /ended inside the object/);
    assert.throws(() => decodeInChunks('{"metadata":{},"items":[{"n":}]}', []), SyntaxError);
    assert.throws(() => decodeInChunks('{"metadata":{} "items":[]}', []), SyntaxError);
    assert.throws(() => decodeInChunks('[]', []), /not an object/);
  });

  it('property: any list, cut anywhere, decodes to JSON.parse of its text with each item mapped', () => {
    const item = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
    const list = fc.record({
      kind: fc.string({ unit: 'binary' }),
      metadata: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
      items: fc.array(item, { maxLength: 6 }),
    });
    fc.assert(
      fc.property(list, fc.array(fc.nat(), { maxLength: 12 }), (value, rawCuts) => {
        const text = JSON.stringify(value);
        const cuts = rawCuts.map((c) => c % (text.length + 1));
        const expected = JSON.parse(text) as { items: unknown[] };
        const decoded = decodeInChunks<unknown>(text, cuts, (x) => ({ mapped: x }));
        assert.deepEqual(decoded, { ...expected, items: expected.items.map((x) => ({ mapped: x })) });
      }),
      { numRuns: 500 },
    );
  });
});
