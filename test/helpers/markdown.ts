import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './project-files.ts';


export interface FencedBlock {
  lang: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** 1-based line of the closing fence; the last line of the text for a fence never closed. */
  end: number;
}

/** The Markdown files a reader meets: the README, the changelog and every guide in docs/. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', 'CHANGELOG.md', ...docs.sort()];
}

export function readDoc(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

/** Every fenced code block with its language tag; one never closed runs to the end of the text. */
export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = text.split('\n');
  let open: { fence: string; lang: string; line: number; body: string[] } | undefined;
  lines.forEach((line, i) => {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (open) {
      if (fence && fence[2].startsWith(open.fence) && line.trim() === fence[2]) {
        blocks.push({ lang: open.lang, body: open.body.join('\n'), line: open.line, end: i + 1 });
        open = undefined;
      } else open.body.push(line);
    } else if (fence) open = { fence: fence[2], lang: fence[3], line: i + 1, body: [] };
  });
  if (open) blocks.push({ lang: open.lang, body: open.body.join('\n'), line: open.line, end: lines.length });
  return blocks;
}

/** The text outside fenced blocks (prose, tables, headings), fenced lines blanked so line numbers hold. */
export function prose(text: string): string {
  const lines = text.split('\n');
  for (const block of fencedBlocks(text)) lines.fill('', block.line - 1, block.end);
  return lines.join('\n');
}

/** What a reader sees as code: fenced blocks and `inline spans`, one string each. */
export function codeSpans(text: string): string[] {
  const inline = [...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  return [...fencedBlocks(text).map((b) => b.body), ...inline];
}

/** GitHub's anchors of a file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}
