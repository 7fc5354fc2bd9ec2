// The docs a reader finishes (issue 42): README.md within 8,000 bytes, no line of the docs over 400 characters, a
// table cell says one sentence (its edge cases go in notes under the table), and every relative link and #anchor of
// README.md, ARCHITECTURE.md, CONTRIBUTING.md, docs/ and bench/results/ leads somewhere. Prints the word counts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = process.cwd();
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const inDir = (dir: string) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `${dir}/${f}`);

/** The pages a reader reads: the README, ARCHITECTURE, CONTRIBUTING and docs/. */
const pages = ['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', ...inDir('docs')];
/** Where the history of the figures lives: its links are checked too, its lines are kept as they were measured. */
const history = inDir('bench/results');

/** A page's text outside fenced code blocks (code is pasted as written, and may hold anything). */
function prose(text: string): string {
  return text.replace(/^( *)(```|~~~)[^\n]*\n[\s\S]*?^\1\2[ \t]*$/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, numbered as GitHub numbers a repeated one (-1, -2, ...). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

/** A table row's cells, without the leading and trailing pipe (an escaped `\|` stays inside its cell). */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/** Where a cell says a second sentence: a full stop (or ? !), then a capital or inline code. */
function secondSentence(cell: string): string | null {
  const text = cell.replace(/`[^`]*`/g, 'Code').replace(/\b(e\.g|i\.e|etc|vs|no)\./g, '$1');
  const m = /[.!?]\)?\s+(?=[A-Z*])/.exec(text);
  return m ? text.slice(Math.max(0, m.index - 30), m.index + 30) : null;
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

describe('the docs', () => {
  it('keeps README.md within 8,000 bytes', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThanOrEqual(8000);
  });

  it('has no line over 400 characters, tables included', () => {
    const long = pages.flatMap((page) =>
      read(page)
        .split('\n')
        .map((line, i) => ({ at: `${page}:${i + 1}`, length: [...line].length }))
        .filter((l) => l.length > 400),
    );
    expect(long).toEqual([]);
  });

  it('says one sentence in each table cell (the edge cases go in notes under the table)', () => {
    const found = pages.flatMap((page) =>
      prose(read(page))
        .split('\n')
        .filter((line) => /^\|.*\|\s*$/.test(line) && !/^\|[\s:|-]+\|\s*$/.test(line))
        .flatMap((row) => cells(row).map((cell) => ({ page, where: secondSentence(cell) })))
        .filter((c) => c.where !== null),
    );
    expect(found).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of [...pages, ...history]) {
      const text = prose(read(page));
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue; // https:, mailto: ...
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = path ? join(dirname(join(root, page)), path) : join(root, page);
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no ${relative(root, file)})`);
          continue;
        }
        if (anchor && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) {
          broken.push(`${page}: ${target} (no heading #${anchor} in ${relative(root, file)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('counts the words a reader has before them (printed)', () => {
    const count = (list: string[]) => list.reduce((sum, page) => sum + words(read(page)), 0);
    const docs = inDir('docs');
    const counts = {
      'README.md': count(['README.md']),
      'ARCHITECTURE.md': count(['ARCHITECTURE.md']),
      'CONTRIBUTING.md': count(['CONTRIBUTING.md']),
      'docs/': count(docs),
      'README.md bytes': Buffer.byteLength(read('README.md')),
    };
    console.log('docs words:', JSON.stringify(counts));
    expect(counts['docs/']).toBeGreaterThan(0);
  });
});
