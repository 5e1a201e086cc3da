// Whether a reply asks to stop: compared without case, accents, surrounding punctuation or repeated spaces.

export function normalizeReply(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toUpperCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export function stopMatcher(keywords: string[]): (text: string) => boolean {
  const set = new Set(keywords.map(normalizeReply).filter((k) => k !== ''));
  return (text) => set.has(normalizeReply(text));
}
