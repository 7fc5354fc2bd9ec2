// Generated product options: the three types, value_list as an array or an object, and product 13805's trap.
import type { WireRecord } from './types';
import type { Rng } from './prng';

/** Products are numbered from here. */
export const FIRST_PRODUCT_NO = 13801;

/** Product 13805: option no 12 has code "SIZE", and option no 3 has the number-like code "12". */
export const AMBIGUOUS_PRODUCT_NO = 13805;

const AMBIGUOUS_OPTIONS: readonly WireRecord[] = [
  {
    no: 3,
    type: 'color',
    code: '12',
    name: '색상',
    is_require: true,
    value_list: { C01: { name: '블랙' }, C02: { name: '화이트' }, C03: { name: '네이비' } },
  },
  {
    no: 12,
    type: 'default',
    code: 'SIZE',
    name: '사이즈',
    is_require: 'Y',
    value_list: [
      { code: 'S', name: 'S' },
      { code: 'M', name: 'M' },
      { code: 'L', name: 'L' },
    ],
  },
  { no: 14, type: 'input', code: 'MEMO', name: '각인 문구', is_require: false, value_list: null },
];

const DEFAULT_OPTIONS: readonly { name: string; values: readonly string[] }[] = [
  { name: '사이즈', values: ['S', 'M', 'L', 'XL', 'XXL'] },
  { name: '용량', values: ['250ml', '500ml', '1L'] },
  { name: '구성', values: ['단품', '2개 세트', '3개 세트'] },
  { name: '두께', values: ['얇음', '보통', '두꺼움'] },
  { name: '길이', values: ['숏', '레귤러', '롱'] },
];
const COLORS = ['블랙', '화이트', '네이비', '베이지', '그레이', '레드', '카키', '아이보리'] as const;
const INPUT_NAMES = ['각인 문구', '선물 메시지', '요청 사항', '이니셜'] as const;
type OptionType = 'default' | 'color' | 'input';

function valueListOf(rng: Rng, type: OptionType): { name: string; valueList?: unknown } {
  if (type === 'default') {
    const option = rng.pick(DEFAULT_OPTIONS);
    const count = rng.int(2, option.values.length);
    const valueList = option.values
      .slice(0, count)
      .map((name, i) => ({ code: `V${String(i + 1).padStart(2, '0')}`, name }));
    return { name: option.name, valueList };
  }
  if (type === 'color') {
    const count = rng.int(2, 5);
    const start = rng.int(0, COLORS.length - count);
    const valueList: Record<string, { name: string }> = {};
    COLORS.slice(start, start + count).forEach((name, i) => {
      valueList[`C${String(start + i + 1).padStart(2, '0')}`] = { name };
    });
    return { name: '색상', valueList };
  }
  // Input options: the real API is seen sending no value_list, [], {} or null.
  const variant = rng.int(0, 3);
  const name = rng.pick(INPUT_NAMES);
  if (variant === 0) return { name };
  return { name, valueList: variant === 1 ? [] : variant === 2 ? {} : null };
}

function isRequireOf(rng: Rng): unknown {
  const required = rng.chance(0.6);
  return rng.chance(0.15) ? (required ? 'Y' : 'N') : required;
}

function generateOptions(rng: Rng, types: readonly OptionType[]): WireRecord[] {
  let no = rng.int(1, 4);
  return types.map((type, i) => {
    const { name, valueList } = valueListOf(rng, type);
    // The leading "O" keeps generated codes from looking like option numbers; only 13805 sets that trap.
    const option: WireRecord = { no, type, code: `O${rng.chars(2)}${i}`, name, is_require: isRequireOf(rng) };
    if (valueList !== undefined) option.value_list = valueList;
    no += rng.int(1, 3);
    return option;
  });
}

function randomType(rng: Rng): OptionType {
  const roll = rng.next();
  return roll < 0.5 ? 'default' : roll < 0.75 ? 'color' : 'input';
}

/**
 * `count` products numbered from 13801; the first has one option of each type, 13805 is the fixed trap.
 * @example generateProducts(createRng(3), 24).get(13805)
 */
export function generateProducts(rng: Rng, count: number): Map<number, WireRecord[]> {
  const products = new Map<number, WireRecord[]>();
  for (let i = 0; i < count; i++) {
    const productNo = FIRST_PRODUCT_NO + i;
    if (productNo === AMBIGUOUS_PRODUCT_NO) {
      products.set(
        productNo,
        AMBIGUOUS_OPTIONS.map((option) => structuredClone(option)),
      );
      continue;
    }
    const types: OptionType[] =
      i === 0 ? ['default', 'color', 'input'] : Array.from({ length: rng.int(1, 5) }, () => randomType(rng));
    products.set(productNo, generateOptions(rng, types));
  }
  return products;
}
