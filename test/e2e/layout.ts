// Reading a screen's layout as a person would see it, from the boxes the engine laid out: parts that overlap or run
// into each other, content that touches the window's edges, a placeholder cut off by its field. Run in the page,
// the same on every engine.
import type { EnginePage } from './engines';

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The border box of the first shown element matching each selector (null when none is shown). */
export function boxesOf(page: EnginePage, selectors: string[]): Promise<Record<string, Box | null>> {
  return page.evaluate((selectors) => {
    const out: Record<string, { left: number; top: number; right: number; bottom: number } | null> = {};
    for (const selector of selectors) {
      const el = [...document.querySelectorAll(selector)].find((e) => e.getClientRects().length > 0);
      const r = el?.getBoundingClientRect();
      out[selector] = r ? { left: r.left, top: r.top, right: r.right, bottom: r.bottom } : null;
    }
    return out;
  }, selectors);
}

/** The pairs of these boxes that overlap by more than a pixel, as `a × b` (missing boxes are not compared). */
export function overlapping(boxes: Record<string, Box | null>): string[] {
  const shown = Object.entries(boxes).filter((e): e is [string, Box] => e[1] !== null);
  const out: string[] = [];
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      const [[a, p], [b, q]] = [shown[i]!, shown[j]!];
      const x = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const y = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (x > 1 && y > 1) out.push(`${a} × ${b}`);
    }
  }
  return out;
}

/** True when each box starts below where the one before it ends: parts that read as lines of their own. */
export function stackedInOrder(boxes: Box[]): boolean {
  return boxes.every((box, i) => i === 0 || box.top >= boxes[i - 1]!.bottom - 1);
}

/** How far the shown content of `selector` stands from the left and right edges of the window (px). */
export function marginsOf(page: EnginePage, selector: string): Promise<{ left: number; right: number }> {
  return page.evaluate((selector) => {
    const el = document.querySelector(selector);
    if (!el) throw new Error(`no ${selector}`);
    const r = el.getBoundingClientRect();
    return { left: r.left, right: document.documentElement.clientWidth - r.right };
  }, selector);
}

/** An input's placeholder: how wide its text is in the input's font, and the room the input gives it (px). */
export function placeholderFit(
  page: EnginePage,
  selector: string,
): Promise<{ text: string; width: number; room: number }> {
  return page.evaluate((selector) => {
    const input = document.querySelector<HTMLInputElement>(selector);
    if (!input) throw new Error(`no ${selector}`);
    const style = getComputedStyle(input);
    const context = document.createElement('canvas').getContext('2d')!;
    context.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return {
      text: input.placeholder,
      width: Math.ceil(context.measureText(input.placeholder).width),
      room: Math.floor(room),
    };
  }, selector);
}
