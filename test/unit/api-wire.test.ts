import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { issuesOf, singleValuedQuery } from '../../api/http/validate.ts';
import { renderWire, toWire, withMembers, WireJson, wireJsonSchema, wireName } from '../../api/http/wire.ts';

describe('wire form', () => {
  it('renames camelCase to snake_case, splitting a unit off its number, and leaves snake_case alone', () => {
    expect(wireName('priceChange15m')).toBe('price_change_15m');
    expect(wireName('median24h')).toBe('median_24h');
    expect(wireName('worstDrawdown24h')).toBe('worst_drawdown_24h');
    expect(wireName('sourceLastEventAt')).toBe('source_last_event_at');
    expect(wireName('unique_authors_1h')).toBe('unique_authors_1h');
    expect(wireName('n')).toBe('n');
  });

  it('renames keys deeply and never touches values', () => {
    const value = { hitRate: 0.1 + 0.2, nested: [{ lagMs: null, tokenId: 'tk_abcDEF1' }], features: { unique_authors_1h: 3 } };
    expect(toWire(value)).toEqual({ hit_rate: 0.1 + 0.2, nested: [{ lag_ms: null, token_id: 'tk_abcDEF1' }], features: { unique_authors_1h: 3 } });
  });

  it('adds per-request members to a body rendered once, as if rendered whole', () => {
    const shared = { objectType: 'x', values: [1.5, null] };
    const perRequest = { freshness: { ageMs: 12, staleReasons: [] } };
    expect(JSON.parse(withMembers(renderWire(shared), perRequest).text)).toEqual(toWire({ ...shared, ...perRequest }));
    expect(JSON.parse(withMembers(renderWire({}), perRequest).text)).toEqual(toWire(perRequest));
  });

  it('adds a member already rendered as it is, without renaming inside it', () => {
    const rendered = new WireJson('[{"keptAsIs":1}]');
    expect(withMembers(renderWire({ hasMore: true }), { dataRows: rendered }).text).toBe('{"has_more":true,"data_rows":[{"keptAsIs":1}]}');
  });

  it('gives bytes when a member is bytes, with the members around it in order', () => {
    const rows = new WireJson(Buffer.from('[{"a":"é"}]'));
    const body = withMembers(renderWire({}), { data: rows, nextCursor: null }).body;
    expect(Buffer.isBuffer(body)).toBe(true);
    expect(body.toString()).toBe('{"data":[{"a":"é"}],"next_cursor":null}');
  });

  it('publishes the same names in JSON Schema, leaving enum values and defaults as they are', () => {
    const schema = { type: 'object', properties: { hasMore: { type: 'boolean' }, sortDir: { enum: ['camelCase'], default: 'camelCase' } }, required: ['hasMore'] };
    expect(wireJsonSchema(schema)).toEqual({
      type: 'object',
      properties: { has_more: { type: 'boolean' }, sort_dir: { enum: ['camelCase'], default: 'camelCase' } },
      required: ['has_more'],
    });
  });
});

describe('validation issues', () => {
  const Query = z.strictObject({ limit: z.coerce.number().int().min(1).max(100), dir: z.enum(['asc', 'desc']) });

  it('gives one issue per problem with its path, code and bound or expected values', () => {
    const result = Query.safeParse({ limit: '101', dir: 'up', extra: '1' });
    expect(result.success).toBe(false);
    const issues = issuesOf('query', result.error!);
    expect(issues).toContainEqual(expect.objectContaining({ path: 'query.limit', code: 'too_big', maximum: 100, inclusive: true }));
    expect(issues).toContainEqual(expect.objectContaining({ path: 'query.dir', code: 'invalid_value', expected: 'asc | desc' }));
    expect(issues).toContainEqual(expect.objectContaining({ path: 'query.extra', code: 'unrecognized_key' }));
  });

  it('writes array indices in brackets', () => {
    const Body = z.strictObject({ rules: z.array(z.strictObject({ value: z.number() })) });
    const result = Body.safeParse({ rules: [{ value: 1 }, { value: 'x' }] });
    expect(issuesOf('body', result.error!)).toEqual([expect.objectContaining({ path: 'body.rules[1].value', code: 'invalid_type', expected: 'number' })]);
  });

  it('refuses a repeated query parameter', () => {
    expect(singleValuedQuery({ a: '1', b: ['1', '2'] })).toEqual({
      values: { a: '1' },
      issues: [expect.objectContaining({ path: 'query.b', code: 'duplicate_parameter' })],
    });
  });
});
