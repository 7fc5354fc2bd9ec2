// Reading the page as a person would: the WCAG 2 contrast ratio of every piece of text shown in a part of the page,
// from the colours the engine computed (the text's colour over the backgrounds of its element and its ancestors,
// translucent ones blended in). AA asks at least 4.5:1 for body text.
import type { EnginePage } from './engines';

interface TextContrast {
  /** The text, shortened. */
  text: string;
  /** data-testid or class of the element, for the report. */
  where: string;
  color: string;
  background: string;
  ratio: number;
}

/** Every visible piece of text inside `rootSelector` with its contrast ratio, lowest first. */
function textContrasts(page: EnginePage, rootSelector: string): Promise<TextContrast[]> {
  return page.evaluate((rootSelector) => {
    type Rgba = [number, number, number, number];
    const parse = (css: string): Rgba => {
      const m = /rgba?\(([^)]+)\)/.exec(css);
      if (!m) throw new Error(`unexpected colour ${css}`);
      const parts = m[1]!
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      return [parts[0]!, parts[1]!, parts[2]!, parts[3] ?? 1];
    };
    // `top` with alpha over an opaque `under`
    const over = (top: Rgba, under: Rgba): Rgba => {
      const a = top[3];
      return [top[0] * a + under[0] * (1 - a), top[1] * a + under[1] * (1 - a), top[2] * a + under[2] * (1 - a), 1];
    };
    const backgroundOf = (el: Element): Rgba => {
      const chain: Element[] = [];
      for (let e: Element | null = el; e; e = e.parentElement) chain.unshift(e);
      let bg: Rgba = [255, 255, 255, 1]; // the canvas
      for (const e of chain) bg = over(parse(getComputedStyle(e).backgroundColor), bg);
      return bg;
    };
    const luminance = ([r, g, b]: Rgba) => {
      const lin = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    };
    const css = ([r, g, b]: Rgba) => `rgb(${Math.round(r)}, ${Math.round(g)}, ${Math.round(b)})`;
    const root = document.querySelector(rootSelector);
    if (!root) throw new Error(`no ${rootSelector}`);
    const out: { text: string; where: string; color: string; background: string; ratio: number }[] = [];
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const own = [...el.childNodes]
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent ?? '')
        .join('')
        .trim();
      if (!own || el.getClientRects().length === 0) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || Number(style.opacity) === 0) continue;
      const background = backgroundOf(el);
      const color = over(parse(style.color), background);
      const [hi, lo] = [luminance(color), luminance(background)].sort((a, b) => b - a) as [number, number];
      out.push({
        text: own.slice(0, 40),
        where: (el as HTMLElement).dataset.testid ?? (el.className || el.tagName.toLowerCase()),
        color: css(color),
        background: css(background),
        ratio: Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100,
      });
    }
    return out.sort((a, b) => a.ratio - b.ratio);
  }, rootSelector);
}

/** The texts of `rootSelector` below `minimum` (WCAG AA: 4.5), as lines a failure message can show. */
export async function unreadableTexts(page: EnginePage, rootSelector: string, minimum = 4.5): Promise<string[]> {
  return (await textContrasts(page, rootSelector))
    .filter((t) => t.ratio < minimum)
    .map((t) => `${JSON.stringify(t.text)} (${t.where}): ${t.color} on ${t.background} = ${t.ratio}:1`);
}
