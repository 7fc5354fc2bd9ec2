import { describe, expect, it } from 'vitest';
import { parseRecord, parseRecords } from '../src/records/parseRecords';
import { readRecord } from '../src/records/schemas';

const option = (fields: Record<string, unknown>) =>
  parseRecord('productOption', { no: 1, code: 'O1', ...fields }, 'data', 13805);

describe('schemas', () => {
  describe('value_list', () => {
    it.each([
      [
        'an array of {code, name}',
        [
          { code: 'S', name: '스몰' },
          { code: 'M', name: '미디엄' },
        ],
        [
          { code: 'S', name: '스몰' },
          { code: 'M', name: '미디엄' },
        ],
      ],
      [
        'an object keyed by value code',
        { C01: { name: '블랙' }, C02: { name: '화이트' } },
        [
          { code: 'C01', name: '블랙' },
          { code: 'C02', name: '화이트' },
        ],
      ],
      ['an object of names', { C01: '블랙' }, [{ code: 'C01', name: '블랙' }]],
      ['missing', undefined, []],
      ['{}', {}, []],
      ['[]', [], []],
      ['null', null, []],
      ['numeric value codes', [{ code: 7, name: '칠' }], [{ code: '7', name: '칠' }]],
    ])('stores %s as one array form', (_form, valueList, expected) => {
      const fields = valueList === undefined ? {} : { value_list: valueList };
      const r = option({ type: 'input', ...fields });
      expect(r.ok && r.record.value_list).toEqual(expected);
    });

    it('keeps extra fields of a value', () => {
      const r = option({ value_list: [{ code: 'S', name: 'S', price: 1000 }] });
      expect(r.ok && r.record.value_list).toEqual([{ code: 'S', name: 'S', price: 1000 }]);
    });

    it('rejects a value without a code, saying where', () => {
      const r = option({ value_list: [{ name: '이름만' }] });
      expect(r.ok).toBe(false);
      expect(!r.ok && r.rejected.issues[0]!.message).toMatch(/value_list\[0\]: expected a value code/);
    });
  });

  describe('coupon', () => {
    it('reads integers that arrive as strings, and booleans as Y/N or 1/0', () => {
      const r = parseRecord(
        'coupon',
        {
          coupon_code: 'A',
          apply_sale_price: '15000',
          apply_sale_type_minimum_price: '30,000',
          apply_sale_percent: 0,
          is_duplication: 'Y',
          use_app: 0,
        },
        'data',
      );
      expect(r.ok && r.record).toMatchObject({
        apply_sale_price: 15000,
        apply_sale_type_minimum_price: 30000,
        apply_sale_percent: 0,
        is_duplication: true,
        use_app: false,
      });
    });

    it('keeps fields the spec does not list, and dates exactly as received', () => {
      const raw = {
        coupon_code: 'A',
        site_code: 'S2020',
        use_period: '2026/03/01 00:00 ~ 2026/05/31 23:59',
        create_date: 1767193200,
      };
      const r = parseRecord('coupon', raw, 'data');
      expect(r.ok && r.record).toEqual(raw);
    });

    it('reads empty strings and nulls of optional fields as null', () => {
      const r = parseRecord('coupon', { coupon_code: 'A', apply_sale_type_max_price: '', use_app: null }, 'data');
      expect(r.ok && r.record).toEqual({ coupon_code: 'A', apply_sale_type_max_price: null, use_app: null });
    });

    it.each([
      ['a missing code', { name: 'x' }, 'data.list[2].coupon_code', 'expected a non-empty code, got undefined'],
      [
        'an unreadable integer',
        { coupon_code: 'A', apply_sale_price: '만원' },
        'data.list[2].apply_sale_price',
        'expected an integer, got "만원"',
      ],
      [
        'an unreadable boolean',
        { coupon_code: 'A', use_app: 'maybe' },
        'data.list[2].use_app',
        'expected a boolean (true/false, Y/N or 1/0), got "maybe"',
      ],
      [
        'an object as a name',
        { coupon_code: 'A', name: { ko: 'x' } },
        'data.list[2].name',
        'expected a string, got an object',
      ],
      ['not an object at all', 'garbage', 'data.list[2]', 'expected a coupon object, got "garbage"'],
    ])('rejects %s with its path and reason', (_what, raw, path, message) => {
      const r = parseRecord('coupon', raw, 'data.list[2]');
      expect(r.ok).toBe(false);
      expect(!r.ok && r.rejected.issues).toContainEqual({ path, message });
    });
  });

  describe('product option', () => {
    it('reads a number-like code as the string it is, and adds product_no', () => {
      const r = parseRecord('productOption', { no: '3', code: 12, type: 'default', is_require: 'N' }, 'data', 13805);
      expect(r.ok && r.record).toEqual({
        no: 3,
        code: '12',
        type: 'default',
        is_require: false,
        value_list: [],
        product_no: 13805,
      });
    });
  });

  it('keeps the good records of a page and reports the bad one with its key', () => {
    const { records, rejected } = parseRecords(
      'coupon',
      [{ coupon_code: 'A' }, { coupon_code: 'B', use_app: 'x' }, { coupon_code: 'C' }],
      'data.list',
    );
    expect(records.map((r) => r.coupon_code)).toEqual(['A', 'C']);
    expect(rejected).toEqual([
      {
        kind: 'coupon',
        key: 'B',
        issues: [{ path: 'data.list[1].use_app', message: 'expected a boolean (true/false, Y/N or 1/0), got "x"' }],
      },
    ]);
  });
  it('keeps a record every reader leaves as it is, its fields in the table order, as that very object; else a copy', () => {
    const loose = { coupon_code: 'A', apply_sale_price: '1,000', is_duplication: 'Y', extra: 'kept' };
    const read = readRecord('coupon', loose)!;
    expect(read).not.toBe(loose);
    expect(read).toEqual({ coupon_code: 'A', apply_sale_price: 1000, is_duplication: true, extra: 'kept' });
    expect(loose.apply_sale_price).toBe('1,000');
    // what readRecord made (as a relay's feed sends it) is read as itself
    expect(readRecord('coupon', read)).toBe(read);
    // the same fields in another order: a copy in the table's order, as zod would make it
    const reordered = { extra: 'kept', is_duplication: true, apply_sale_price: 1000, coupon_code: 'A' };
    const copy = readRecord('coupon', reordered);
    expect(copy).not.toBe(reordered);
    expect(Object.keys(copy!)).toEqual(Object.keys(read));
  });

  it('makes the path of a record given as a function only when the record fails, and names it then', () => {
    let made = 0;
    const path = () => {
      made++;
      return 'feed.upserts[3].record';
    };
    expect(parseRecord('coupon', { coupon_code: 'A' }, path).ok).toBe(true);
    expect(made).toBe(0);
    const bad = parseRecord('coupon', { coupon_code: { nested: true } }, path);
    expect(bad.ok ? null : bad.rejected.issues[0]?.path).toMatch(/^feed\.upserts\[3\]\.record/);
    expect(made).toBe(1);
  });
});
