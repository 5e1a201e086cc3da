// Reply keywords: which replies ask to stop (STOP), to receive again (START) or for help (HELP). A keyword is
// the whole reply, not a word inside it: "please stop sending" is a sentence to read, not an opt-out.

export type ReplyKeyword = 'STOP' | 'START' | 'HELP';

export interface KeywordLists {
  stop: readonly string[];
  start: readonly string[];
  help: readonly string[];
}

/** Punctuation a handset user puts after a word ("Stop.", "stop !", "Arrêt…"), with the spaces before it. */
const trailingPunctuation = /[\s.!?,;:…]+$/u;

/**
 * The form replies and keywords are compared in: trimmed, without case or accents (NFD, combining marks
 * dropped), inner whitespace collapsed to one space, and the punctuation ending it dropped.
 */
export function normalizeKeyword(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(trailingPunctuation, '');
}

/** A comma-separated list of keywords (an environment variable): empty entries are dropped. */
export function parseKeywords(list: string): string[] {
  return list
    .split(',')
    .map((k) => k.trim())
    .filter((k) => normalizeKeyword(k) !== '');
}

/**
 * Classifies a whole reply. A keyword configured in several lists counts for the first of STOP, START, HELP:
 * an opt-out is never read as anything else.
 */
export function keywordMatcher(lists: KeywordLists): (text: string) => ReplyKeyword | undefined {
  const byForm = new Map<string, ReplyKeyword>();
  const add = (keywords: readonly string[], keyword: ReplyKeyword) => {
    for (const k of keywords) {
      const form = normalizeKeyword(k);
      if (form !== '' && !byForm.has(form)) byForm.set(form, keyword);
    }
  };
  add(lists.stop, 'STOP');
  add(lists.start, 'START');
  add(lists.help, 'HELP');
  return (text) => byForm.get(normalizeKeyword(text));
}

/** A sender ID the delivery path accepts: 3–11 letters or digits with a letter, or up to 15 digits. */
const validSender = /^((?=.*[A-Za-z])[A-Za-z0-9]{3,11}|[0-9]{1,15})$/;

/**
 * Who the answer to a HELP comes from: the number the handset wrote to (a short code or long number, without
 * a leading `+` or `00`), so the answer lands in the same conversation; `fallback` when that address is not
 * a sender ID a carrier takes.
 */
export function answerSender(repliedTo: string, fallback: string): string {
  const address = repliedTo.trim().replace(/^\+|^00/, '');
  return validSender.test(address) ? address : fallback;
}
