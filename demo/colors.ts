// A swatch colour for an option value's name ("블랙", "Navy", "다크 그레이"), or null for a neutral chip.
const KOREAN: [string, string][] = [
  // longer names first, so "네이비" wins over "네이", "다크그레이" over "그레이"
  ['라이트그레이', '#c8c8c8'],
  ['다크그레이', '#4a4a4a'],
  ['스카이블루', '#87ceeb'],
  ['아이보리', '#f6f1e1'],
  ['라벤더', '#b9a7d9'],
  ['버건디', '#7a1f2b'],
  ['네이비', '#1f2b4d'],
  ['베이지', '#d8c3a5'],
  ['그레이', '#8c8c8c'],
  ['그린', '#2e7d32'],
  ['블랙', '#1c1c1c'],
  ['화이트', '#ffffff'],
  ['레드', '#c62828'],
  ['블루', '#1e5bc6'],
  ['카키', '#6b6b3a'],
  ['옐로우', '#f2c230'],
  ['옐로', '#f2c230'],
  ['핑크', '#f19cb7'],
  ['퍼플', '#7b3fa0'],
  ['브라운', '#7b5134'],
  ['오렌지', '#ef7d22'],
  ['민트', '#98e0c8'],
  ['와인', '#722f37'],
  ['실버', '#c0c0c0'],
  ['골드', '#c9a227'],
  ['차콜', '#36393d'],
  ['크림', '#f3e9cf'],
  ['코랄', '#f27e63'],
  ['올리브', '#708238'],
  ['검정', '#1c1c1c'],
  ['검은', '#1c1c1c'],
  ['흰색', '#ffffff'],
  ['하양', '#ffffff'],
  ['빨강', '#c62828'],
  ['빨간', '#c62828'],
  ['파랑', '#1e5bc6'],
  ['파란', '#1e5bc6'],
  ['초록', '#2e7d32'],
  ['노랑', '#f2c230'],
  ['노란', '#f2c230'],
  ['분홍', '#f19cb7'],
  ['보라', '#7b3fa0'],
  ['갈색', '#7b5134'],
  ['회색', '#8c8c8c'],
  ['남색', '#1f2b4d'],
  ['하늘', '#87ceeb'],
  ['주황', '#ef7d22'],
  ['연두', '#9ccc65'],
  ['청', '#1e5bc6'],
];

/**
 * @example swatchColor('네이비') // '#1f2b4d'; swatchColor('Forest Green') // 'forestgreen'; swatchColor('랜덤')
 * // null
 */
export function swatchColor(name: string | null | undefined): string | null {
  if (!name) return null;
  const compact = name.replace(/\s+/g, '').toLowerCase();
  for (const [word, color] of KOREAN) if (compact.includes(word)) return color;
  // English names: whatever CSS knows ("navy", "forestgreen", "lightgray")
  if (/^[a-z]+$/.test(compact) && typeof CSS !== 'undefined' && CSS.supports('color', compact)) return compact;
  const last = name.trim().split(/\s+/).at(-1)?.toLowerCase() ?? '';
  if (/^[a-z]+$/.test(last) && typeof CSS !== 'undefined' && CSS.supports('color', last)) return last;
  return null;
}

/** Dark text on light swatches, light text on dark ones. */
export function isLight(color: string): boolean {
  const probe = document.createElement('span');
  probe.style.color = color;
  document.body.appendChild(probe);
  const rgb = getComputedStyle(probe).color.match(/\d+/g)?.map(Number) ?? [128, 128, 128];
  probe.remove();
  const [r = 128, g = 128, b = 128] = rgb;
  return 0.299 * r + 0.587 * g + 0.114 * b > 160;
}
