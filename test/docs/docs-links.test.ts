// Every relative link in the repository's Markdown reaches a file of the repository, and a heading of it when
// the link names one: a newcomer who follows the docs never lands on a missing page or a dead anchor.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The repository's files (tracked, or new and not ignored), as paths relative to the root with '/'. */
function repositoryFiles(): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
    });
    return out.split('\0').filter((path) => path !== '' && existsSync(join(root, path)));
  } catch {
    // Not a git checkout (an unpacked release): walk the tree, leaving out what is never part of it.
    const skipped = new Set(['.git', 'node_modules', 'dist', 'data', 'coverage']);
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
        if (skipped.has(entry.name)) continue;
        const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) files.push(path);
      }
    };
    walk('');
    return files;
  }
}

/** GitHub's anchor for a heading: its text as rendered, lower-cased, punctuation dropped, spaces to '-'. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, ''); // code spans and emphasis
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Lines outside fenced code blocks, with inline code spans blanked, and their numbers. */
function proseLines(markdown: string): { line: number; raw: string; text: string }[] {
  const lines: { line: number; raw: string; text: string }[] = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((raw, index) => {
    const opening = raw.match(/^\s{0,3}(`{3,}|~{3,})/);
    if (fence !== null) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = null;
      return;
    }
    if (opening) {
      fence = opening[1];
      return;
    }
    lines.push({
      line: index + 1,
      raw,
      text: raw.replace(/(`+)[^`][\s\S]*?\1/g, (span) => ' '.repeat(span.length)),
    });
  });
  return lines;
}

/** The anchors a Markdown file offers: its headings' slugs (repeated ones numbered -1, -2…) and HTML ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (heading: string) => {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  };
  const lines = proseLines(markdown);
  lines.forEach(({ raw, text }, i) => {
    const atx = raw.match(/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/);
    if (atx) add(atx[1]);
    const next = lines[i + 1];
    if (
      !atx &&
      next &&
      next.line === lines[i].line + 1 &&
      text.trim() !== '' &&
      /^\s{0,3}(=+|-+)\s*$/.test(next.text)
    ) {
      if (!/^\s*([-*+]|\d+\.)\s/.test(text) && !text.includes('|')) add(raw);
    }
    for (const id of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id[1]);
  });
  return anchors;
}

/** The link targets of a Markdown file that are not absolute URLs, with the line each is on. */
function relativeLinks(markdown: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const targets = [
      ...[...text.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)].map(
        (m) => m[1],
      ),
      ...[...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1]),
      ...[...text.matchAll(/<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/g)].map((m) => m[1]),
    ];
    for (const raw of targets) {
      const target = raw.replace(/^<|>$/g, '');
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      links.push({ line, target });
    }
  }
  return links;
}

/** What is wrong with each relative link of `file` (a path from the root), given the repository's files. */
function brokenLinks(file: string, markdown: string, files: Set<string>, read: (path: string) => string) {
  const dirs = new Set<string>();
  for (const path of files) {
    for (let dir = posix.dirname(path); dir !== '.'; dir = posix.dirname(dir)) dirs.add(dir);
  }
  const problems: string[] = [];
  for (const { line, target } of relativeLinks(markdown)) {
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const resolved = pathPart === '' ? file : posix.normalize(posix.join(posix.dirname(file), pathPart));
    const path = resolved.replace(/\/$/, '');
    const where = `${file}:${line}: ${target}`;
    if (path === '..' || path.startsWith('../') || posix.isAbsolute(path)) {
      problems.push(`${where} leaves the repository`);
    } else if (!files.has(path) && !dirs.has(path)) {
      problems.push(`${where} names no file of the repository`);
    } else if (anchor !== null && anchor !== '') {
      if (!files.has(path) || !path.endsWith('.md'))
        problems.push(`${where} has an anchor on a non-Markdown target`);
      else if (!anchorsOf(read(path)).has(anchor)) problems.push(`${where} names no heading of ${path}`);
    }
  }
  return problems;
}

describe('the checker itself', () => {
  const files = new Set(['README.md', 'docs/api.md', 'docs/console/a.png']);
  const pages: Record<string, string> = {
    'docs/api.md': '# The API\n\n## Errors: the `envelope`\n\n## Errors: the `envelope`\n',
  };
  const check = (markdown: string) => brokenLinks('README.md', markdown, files, (path) => pages[path] ?? '');

  it('finds a heading by its GitHub slug, repeated headings numbered', () => {
    expect(check('[a](docs/api.md#errors-the-envelope) [b](docs/api.md#errors-the-envelope-1)')).toEqual([]);
  });

  it('reports a missing file, a missing anchor and a path outside the repository', () => {
    expect(check('[a](docs/gone.md)\n[b](docs/api.md#nowhere)\n[c](../shared/API.md)')).toEqual([
      'README.md:1: docs/gone.md names no file of the repository',
      'README.md:2: docs/api.md#nowhere names no heading of docs/api.md',
      'README.md:3: ../shared/API.md leaves the repository',
    ]);
  });

  it('accepts folders and images, and ignores URLs and links inside code', () => {
    expect(check('![x](docs/console/a.png) [y](docs/console/) [z](https://example.com/gone.md)')).toEqual([]);
    expect(check('`[a](docs/gone.md)`\n```\n[b](docs/gone.md)\n```')).toEqual([]);
  });
});

describe('the repository', () => {
  const files = repositoryFiles();
  const set = new Set(files);
  const markdown = files.filter((path) => path.endsWith('.md') && statSync(join(root, path)).isFile());
  const cache = new Map<string, string>();
  const read = (path: string) => {
    let text = cache.get(path);
    if (text === undefined) {
      text = readFileSync(join(root, path), 'utf8');
      cache.set(path, text);
    }
    return text;
  };

  it('has Markdown files to check', () => {
    expect(markdown).toContain('README.md');
  });

  it.each(markdown)('every relative link of %s resolves inside the repository', (file) => {
    expect(brokenLinks(file, read(file), set, read)).toEqual([]);
  });
});
