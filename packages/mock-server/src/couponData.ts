// Generated coupon records, with the variation the real API shows (strings for integers, Y/N booleans, date formats).
import type { WireRecord } from './types';
import {
  formatDash,
  formatSlash,
  formatUnix,
  kst,
  ONE_DAY_MS,
  randomDay,
  randomKst,
  type KstMs,
  type Rng,
} from './prng';

/** The fixed coupons that open every generated list, in this order. */
export const SPECIAL_COUPONS: readonly WireRecord[] = [
  {
    coupon_code: 'WELCOME10',
    status: 'progress',
    apply_sale_price: 0,
    apply_sale_percent: 10,
    apply_sale_type_max_price: 5000,
    apply_sale_type_minimum_price: 10000,
    name: '신규가입 10% 할인',
    type: 'down',
    type_coupon_create_count: 1520,
    type_coupon_use_count: 611,
    use_period: '',
    create_date: '2025-12-01 09:00:00',
    edit_date: '2026-01-02 10:30:00',
    is_duplication: false,
    use_app: false,
  },
  {
    coupon_code: 'FIXED3000',
    status: 'progress',
    apply_sale_price: 3000,
    apply_sale_percent: 0,
    apply_sale_type_max_price: 0,
    apply_sale_type_minimum_price: 20000,
    name: '봄맞이 3,000원 할인',
    type: 'create',
    type_coupon_create_count: 500,
    type_coupon_use_count: 132,
    use_period: '2026-01-01 00:00:00 ~ 2027-12-31 23:59:59',
    create_date: '2025-12-20 14:00:00',
    edit_date: '2025-12-20 14:00:00',
    is_duplication: true,
    use_app: false,
  },
  {
    coupon_code: '봄 세일/10%?#&',
    status: 'progress',
    apply_sale_price: 0,
    apply_sale_percent: 10,
    apply_sale_type_max_price: 10000,
    apply_sale_type_minimum_price: 30000,
    name: '봄 세일 10% 할인',
    type: 'down',
    type_coupon_create_count: 300,
    type_coupon_use_count: 41,
    use_period: '2026/03/01 00:00 ~ 2027/05/31 23:59',
    create_date: '2026-02-20 11:12:13',
    edit_date: '2026-02-21 09:00:00',
    is_duplication: 'N',
    use_app: 'N',
  },
  {
    // Still "progress": only the period says it is over, which is what clients must check.
    coupon_code: 'EXPIRED2025',
    status: 'progress',
    apply_sale_price: 5000,
    apply_sale_percent: 0,
    apply_sale_type_max_price: 0,
    apply_sale_type_minimum_price: 50000,
    name: '2025 연말 5,000원 할인',
    type: 'down',
    type_coupon_create_count: 800,
    type_coupon_use_count: 377,
    use_period: '2025-01-01 00:00:00 ~ 2025-12-31 23:59:59',
    create_date: '2024-12-15 10:00:00',
    edit_date: '2025-01-03 18:20:00',
    is_duplication: false,
    use_app: false,
  },
  {
    coupon_code: 'APPONLY',
    status: 'progress',
    apply_sale_price: 0,
    apply_sale_percent: 15,
    apply_sale_type_max_price: 10000,
    apply_sale_type_minimum_price: 0,
    name: '앱 전용 15% 쿠폰',
    type: 'down',
    type_coupon_create_count: 2000,
    type_coupon_use_count: 954,
    use_period: '1767193200 ~ 1830265199',
    create_date: '2025-11-11 11:11:11',
    edit_date: '2026-03-02 08:45:00',
    is_duplication: false,
    use_app: true,
  },
];

const OCCASIONS = [
  '신규가입',
  '봄맞이',
  '여름 시즌',
  '가을 정기',
  '겨울 특가',
  'VIP 전용',
  '앱 전용',
  '생일 축하',
  '재구매 감사',
  '첫 구매',
  '주말 한정',
  '리뷰 작성',
  '친구 초대',
  '블랙프라이데이',
  '추석 맞이',
  '설날 맞이',
  '회원 등급',
  '카카오 채널',
] as const;
const SUFFIXES = [' 할인', ' 할인 쿠폰', ' 쿠폰', ' 즉시할인', ' 혜택'] as const;
const TARGETS = ['all', 'member', 'first_order', 'grade'] as const;

const names = new Map<number, string>();

/** A coupon name like "봄맞이 5,000원 할인"; names repeat a lot, so equal ones share one string. */
function nameOf(rng: Rng, percent: number, price: number): string {
  const occasion = rng.int(0, OCCASIONS.length - 1);
  const suffix = rng.int(0, SUFFIXES.length - 1);
  const style = rng.int(0, 2);
  const key = ((occasion * SUFFIXES.length + suffix) * 3 + style) * 100_000 + (percent > 0 ? percent : 100 + price);
  let name = names.get(key);
  if (name === undefined) {
    let discount = `${percent}%`;
    if (percent === 0) {
      if (style === 1 && price % 10000 === 0) discount = `${price / 10000}만원`;
      else if (style === 2 && price % 1000 === 0 && price < 10000) discount = `${price / 1000}천원`;
      else discount = `${String(price).replace(/\B(?=(\d{3})+$)/g, ',')}원`;
    }
    name = `${OCCASIONS[occasion]} ${discount}${SUFFIXES[suffix]}`;
    names.set(key, name);
  }
  return name;
}

function statusOf(rng: Rng): string {
  const roll = rng.next();
  if (roll < 0.8) return 'progress';
  if (roll < 0.88) return 'stop';
  if (roll < 0.97) return 'end';
  return 'ready';
}

// Fixed instants, computed once: Date.UTC per record showed up in profiles of 100,000 coupons.
const T = {
  from2024: kst(2024, 1, 1),
  mid2025: kst(2025, 6, 1),
  endH1of2025: kst(2025, 6, 30),
  start2026: kst(2026, 1, 1),
  endH1of2026: kst(2026, 6, 30),
  created: kst(2026, 9, 30),
  edited: kst(2026, 10, 31),
  mar2027: kst(2027, 3, 1),
  jun2027: kst(2027, 6, 30),
  lastDay2027: kst(2027, 12, 31),
  end2027: kst(2027, 12, 31, 23, 59, 59),
  mid2028: kst(2028, 6, 30),
};
const LAST_SECOND = ONE_DAY_MS - 1000;

/** A use_period: mostly covering 2026-01-01..2027-12-31, some expired, some not started, some unlimited. */
function periodOf(rng: Rng): string {
  const roll = rng.next();
  if (roll < 0.05) return rng.chance(0.5) ? '' : 'unlimited';
  let start: KstMs;
  let end: KstMs;
  if (roll < 0.85) {
    start = randomDay(rng, T.mid2025, T.start2026);
    end = randomDay(rng, T.lastDay2027, T.mid2028) + LAST_SECOND;
  } else if (roll < 0.95) {
    start = randomDay(rng, T.from2024, T.endH1of2025);
    end = randomDay(rng, start + 30 * ONE_DAY_MS, T.endH1of2026) + LAST_SECOND;
  } else {
    start = randomDay(rng, T.mar2027, T.jun2027);
    end = T.end2027;
  }
  const format = rng.next();
  if (format < 0.55) return `${formatDash(start)} ~ ${formatDash(end)}`;
  if (format < 0.8) return `${formatSlash(start)} ~ ${formatSlash(end)}`;
  return `${formatUnix(start)} ~ ${formatUnix(end)}`;
}

/** true/false on most records, "Y"/"N" or 1/0 on some (style chosen once per record, like a legacy column). */
function asBoolean(style: number, value: boolean): unknown {
  if (style < 0.8) return value;
  if (style < 0.9) return value ? 'Y' : 'N';
  return value ? 1 : 0;
}

/**
 * One generated coupon. `index` makes the code unique; the rest comes from `rng`.
 * @example generateCoupon(createRng(1), 5).coupon_code // 'CP…0005'
 */
export function generateCoupon(rng: Rng, index: number): WireRecord {
  const isPercent = rng.chance(0.5);
  const percent = isPercent ? (rng.chance(0.7) ? rng.int(1, 10) * 5 : rng.int(5, 50)) : 0;
  const price = isPercent ? 0 : rng.int(2, 40) * 500;
  const maxPrice = isPercent && rng.chance(0.5) ? rng.int(1, 30) * 1000 : 0;
  const minimum = rng.chance(0.4) ? 0 : rng.int(2, 20) * 5000;
  const type = rng.chance(0.7) ? 'down' : 'create';
  const created = type === 'down' ? rng.int(0, 2000) : rng.int(100, 10000);
  const used = rng.int(0, created);
  const createdAt = randomKst(rng, T.from2024, T.created);
  const editedAt = Math.min(createdAt + rng.int(0, 120) * ONE_DAY_MS + rng.int(0, 86_399) * 1000, T.edited);
  const booleanStyle = rng.next();
  // Some shops' records send integers as strings; clients must coerce them.
  const stringly = rng.chance(0.08);
  const asInteger = (n: number): unknown => (stringly ? String(n) : n);

  const record: WireRecord = {
    coupon_code: `CP${rng.chars(4)}${index.toString(36).toUpperCase().padStart(4, '0')}`,
    status: statusOf(rng),
    apply_sale_price: asInteger(price),
    apply_sale_percent: asInteger(percent),
    apply_sale_type_max_price: asInteger(maxPrice),
    apply_sale_type_minimum_price: asInteger(minimum),
    name: nameOf(rng, percent, price),
    type,
    type_coupon_create_count: asInteger(created),
    type_coupon_use_count: asInteger(used),
    use_period: periodOf(rng),
    create_date: formatDash(createdAt),
    edit_date: formatDash(editedAt),
    is_duplication: asBoolean(booleanStyle, rng.chance(0.3)),
    use_app: asBoolean(booleanStyle, rng.chance(0.1)),
  };
  // Rare gaps and extra fields: clients must tolerate the first and keep the second.
  const extra = rng.next();
  if (extra < 0.05) record.site_code = `S2024${rng.chars(8, '0123456789abcdef')}`;
  else if (extra < 0.08) record.coupon_target = rng.pick(TARGETS);
  else if (extra < 0.1) delete record.edit_date;
  else if (extra < 0.11) delete record.apply_sale_type_max_price;
  return record;
}
