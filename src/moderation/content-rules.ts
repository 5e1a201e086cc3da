// Content rules: what a rule may say (checked when it is stored), and the rules of an account compiled once
// into one matcher that reads a campaign's text and links. Pure: no database, no clock.

export const ruleKinds = ['domain', 'word', 'pattern'] as const;
export type RuleKind = (typeof ruleKinds)[number];
export const ruleActions = ['refuse', 'hold'] as const;
export type RuleAction = (typeof ruleActions)[number];

export interface ContentRule {
  id: number;
  /** null: every account's. */
  accountId: number | null;
  kind: RuleKind;
  value: string;
  action: RuleAction;
}

/** The longest value a rule may hold: bounds a pattern's size, and so its compile and match time. */
export const maxRuleLength = 200;

/** What a campaign's text and links broke: the first refusing rule, else the first holding one. */
export interface RuleHit {
  rule: ContentRule;
  /** What matched, as found in the text or a link. */
  found: string;
}

/** How a rule reads in an error or a note: `rule 12 (word "casino")`. */
export const describeRule = (rule: ContentRule): string =>
  `rule ${rule.id} (${rule.kind} "${rule.value}"${rule.accountId === null ? '' : `, account ${rule.accountId}`})`;

const domainShape = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

/** Lower case without accents: words are compared so ("Casinò" is "casino"). */
const fold = (text: string): string => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/**
 * Why a pattern could take exponential time on some text, or undefined when it cannot (as far as this check
 * sees): a quantified group that itself holds a quantifier or an alternation (`(a+)+`, `(a|aa)*`), or a
 * backreference. Such a pattern is refused when stored; the rest run on texts MAX_PARTS bounds.
 */
export function catastrophicReason(pattern: string): string | undefined {
  // Per open group: whether it holds a quantifier or an alternation.
  const groups: boolean[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      if (/[1-9k]/.test(pattern[i + 1] ?? '')) return 'a backreference';
      i++;
      continue;
    }
    if (c === '[') {
      // A character class: its content is no quantifier.
      i++;
      while (i < pattern.length && pattern[i] !== ']') {
        if (pattern[i] === '\\') i++;
        i++;
      }
      continue;
    }
    if (c === '(') {
      groups.push(false);
      continue;
    }
    const quantifier =
      c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d+(,\d*)?\}/.test(pattern.slice(i)));
    if (c === ')') {
      const inner = groups.pop() ?? false;
      const next = pattern[i + 1];
      const repeated =
        next === '*' || next === '+' || (next === '{' && /^\{\d+,\d*\}/.test(pattern.slice(i + 1)));
      if (inner && repeated)
        return 'a repeated group that holds a quantifier or an alternation (nested quantifier)';
      if (groups.length > 0 && (inner || repeated)) groups[groups.length - 1] = true;
      continue;
    }
    if ((quantifier && c !== '?') || c === '|') {
      if (groups.length > 0) groups[groups.length - 1] = true;
    }
  }
  return undefined;
}

/**
 * A rule's kind, value and action checked and normalized before it is stored; the first problem is thrown as
 * a message naming it (the service turns it into -7).
 */
export function normalizeRule(
  kind: string,
  value: string,
  action: string,
): {
  kind: RuleKind;
  value: string;
  action: RuleAction;
} {
  if (!(ruleKinds as readonly string[]).includes(kind))
    throw new Error(`rule.kind "${kind}" is not one of: ${ruleKinds.join(', ')}`);
  if (!(ruleActions as readonly string[]).includes(action))
    throw new Error(`rule.action "${action}" is not one of: ${ruleActions.join(', ')}`);
  const trimmed = value.trim();
  if (trimmed === '') throw new Error('rule.value is empty');
  if (trimmed.length > maxRuleLength)
    throw new Error(`rule.value is ${trimmed.length} characters long; at most ${maxRuleLength}`);
  if (kind === 'domain') {
    const domain = trimmed
      .toLowerCase()
      .replace(/^https?:\/\//, '')
      .replace(/\/.*$/, '')
      .replace(/^\*\./, '');
    if (!domainShape.test(domain))
      throw new Error(`rule.value "${trimmed}" is not a domain name (example.com)`);
    return { kind, value: domain, action: action as RuleAction };
  }
  if (kind === 'word')
    return { kind, value: fold(trimmed).replace(/\s+/g, ' '), action: action as RuleAction };
  const reason = catastrophicReason(trimmed);
  if (reason)
    throw new Error(
      `rule.value: the pattern "${trimmed}" is refused: it has ${reason}, which can take exponential time`,
    );
  try {
    new RegExp(trimmed, 'iu');
  } catch (error) {
    throw new Error(
      `rule.value: the pattern "${trimmed}" is not a valid regular expression: ${(error as Error).message}`,
    );
  }
  return { kind: 'pattern', value: trimmed, action: action as RuleAction };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A host name, dot-separated labels and a top-level domain: each label is split at its dots, so it runs in linear time. */
const hostShape = /^(?:[a-z0-9-]+\.)+[a-z]{2,63}$/;

/**
 * Host names written in a text, with or without a scheme (`https://a.example/x`, `www.b.example`, `x@c.example`),
 * and those of the links: the text is cut into tokens of URL characters, each token's host kept when it is one.
 * No backtracking regular expression runs over the whole text.
 */
function hostsOf(text: string, links: readonly string[]): Set<string> {
  const hosts = new Set<string>();
  for (const token of text.toLowerCase().split(/[^a-z0-9.\-:/]+/)) {
    if (!token.includes('.')) continue;
    const host = token
      .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
      .split('/', 1)[0]
      .replace(/:\d*$/, '')
      .replace(/\.+$/, '');
    if (hostShape.test(host)) hosts.add(host);
  }
  for (const link of links) {
    try {
      hosts.add(new URL(link).hostname.toLowerCase());
    } catch {
      // The send's own checks refuse a link that is no URL.
    }
  }
  return hosts;
}

export type RuleMatcher = (text: string, links: readonly string[]) => RuleHit | undefined;

/**
 * The rules compiled once into a matcher of a campaign's text and its `<-short->` targets: refusing rules are
 * tried first, so a refusal wins over a hold. Undefined when there is no rule at all (nothing to run).
 */
export function compileRules(rules: readonly ContentRule[]): RuleMatcher | undefined {
  if (rules.length === 0) return undefined;
  const ordered = [...rules].sort((a, b) =>
    a.action === b.action ? a.id - b.id : a.action === 'refuse' ? -1 : 1,
  );
  const tests = ordered.map((rule) => {
    if (rule.kind === 'domain') {
      const suffix = `.${rule.value}`;
      return (_folded: string, _text: string, hosts: Set<string>) => {
        for (const host of hosts) if (host === rule.value || host.endsWith(suffix)) return host;
        return undefined;
      };
    }
    if (rule.kind === 'word') {
      const words = rule.value.split(' ').map(escapeRegExp).join('\\s+');
      const re = new RegExp(`(?<![\\p{L}\\p{N}])${words}(?![\\p{L}\\p{N}])`, 'u');
      return (folded: string) => re.exec(folded)?.[0];
    }
    const re = new RegExp(rule.value, 'iu');
    return (_folded: string, text: string) => re.exec(text)?.[0];
  });
  const hasDomainRule = rules.some((r) => r.kind === 'domain');
  const noHosts = new Set<string>();
  // Most texts break no rule: one pass of all the words together and one of all the patterns together says so,
  // where each rule's own test would read the text once per rule. Only a text that matches one of them (or
  // names a host, with domain rules) is tried rule by rule, to find which rule wins.
  const words = ordered.filter((r) => r.kind === 'word');
  const anyWord =
    words.length === 0
      ? undefined
      : new RegExp(
          `(?<![\\p{L}\\p{N}])(?:${words.map((r) => r.value.split(' ').map(escapeRegExp).join('\\s+')).join('|')})(?![\\p{L}\\p{N}])`,
          'u',
        );
  const patterns = ordered.filter((r) => r.kind === 'pattern');
  const anyPattern =
    patterns.length === 0 ? undefined : new RegExp(patterns.map((r) => `(?:${r.value})`).join('|'), 'iu');
  return (text, links) => {
    const folded = anyWord === undefined ? text : fold(text);
    const all = links.length > 0 ? `${text}\n${links.join('\n')}` : text;
    // Hosts are looked for only when a domain rule will read them.
    const hosts = hasDomainRule ? hostsOf(text, links) : noHosts;
    if (hosts.size === 0 && !anyWord?.test(folded) && !anyPattern?.test(all)) return undefined;
    for (let i = 0; i < ordered.length; i++) {
      const found = tests[i](folded, all, hosts);
      if (found !== undefined) return { rule: ordered[i], found };
    }
    return undefined;
  };
}
