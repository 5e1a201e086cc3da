// A strict reader of the Prometheus text exposition format (0.0.4), as a scraper would read /metrics:
// prom-client writes the format but has no parser. Any line a scraper would reject throws, naming the line:
// a bad metric or label name, an unescaped label value, a value that is not a float, a sample before its
// family's TYPE or apart from its family's other samples, a series given twice, a histogram whose buckets
// decrease or whose +Inf bucket differs from its count.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string | undefined;
  samples: Sample[];
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const types = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, where: string): number {
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: bad value "${text}"`);
  return Number(text);
}

/** Reads `{a="x",b="y"}` from `line` at `at` (the brace); answers the labels and the index after `}`. */
function parseLabels(line: string, at: number, where: string): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    if (line[i] === '}') return [labels, i + 1];
    const eq = line.indexOf('=', i);
    if (eq < 0) throw new Error(`${where}: label without "="`);
    const name = line.slice(i, eq);
    if (!labelName.test(name)) throw new Error(`${where}: bad label name "${name}"`);
    if (name in labels) throw new Error(`${where}: label "${name}" given twice`);
    if (line[eq + 1] !== '"') throw new Error(`${where}: label value of "${name}" not quoted`);
    let value = '';
    let j = eq + 2;
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] === '\\') {
        const next = line[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`${where}: bad escape "\\${next}" in label "${name}"`);
      } else value += line[j];
    }
    if (j >= line.length) throw new Error(`${where}: unterminated value of label "${name}"`);
    labels[name] = value;
    i = j + 1;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') throw new Error(`${where}: expected "," or "}" after label "${name}"`);
  }
}

/** The family a sample belongs to: its own name, or a histogram's or summary's without the suffix. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const own = families.get(name);
  if (own) return own;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  const family = families.get(base);
  if (family && (family.type === 'histogram' || family.type === 'summary')) {
    if (name.endsWith('_bucket') && family.type !== 'histogram') return undefined;
    return family;
  }
  return undefined;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without "le"`);
      entry.buckets.push([parseValue(le, family.name), sample.value]);
    } else if (sample.name.endsWith('_count')) entry.count = sample.value;
  }
  for (const [key, { buckets, count }] of series) {
    buckets.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < buckets.length; i++) {
      if (buckets[i][1] < buckets[i - 1][1]) throw new Error(`${family.name} ${key}: buckets decrease`);
    }
    const inf = buckets[buckets.length - 1];
    if (!inf || inf[0] !== Number.POSITIVE_INFINITY) throw new Error(`${family.name} ${key}: no +Inf bucket`);
    if (inf[1] !== count) throw new Error(`${family.name} ${key}: +Inf bucket ${inf[1]} != count ${count}`);
  }
}

/** Every family of an exposition, by name; throws at the first line a scraper would reject. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const closed = new Set<string>();
  let current: Family | undefined;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const where = `line ${n + 1} "${line.slice(0, 80)}"`;
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) continue;
      const [, kind, name, rest = ''] = m;
      if (!metricName.test(name)) throw new Error(`${where}: bad metric name`);
      if (closed.has(name)) throw new Error(`${where}: family ${name} appears twice`);
      let family = families.get(name);
      if (!family) {
        family = { name, type: 'untyped', help: undefined, samples: [] };
        families.set(name, family);
      }
      if (current && current !== family) closed.add(current.name);
      current = family;
      if (kind === 'TYPE') {
        if (!types.has(rest)) throw new Error(`${where}: unknown type "${rest}"`);
        if (family.samples.length > 0) throw new Error(`${where}: TYPE after samples`);
        family.type = rest;
      } else {
        if (family.help !== undefined) throw new Error(`${where}: HELP given twice`);
        family.help = rest;
      }
      continue;
    }
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    const nameEnd = brace >= 0 && (space < 0 || brace < space) ? brace : space;
    if (nameEnd <= 0) throw new Error(`${where}: no value`);
    const name = line.slice(0, nameEnd);
    if (!metricName.test(name)) throw new Error(`${where}: bad metric name "${name}"`);
    let labels: Record<string, string> = {};
    let at = nameEnd;
    if (line[at] === '{') [labels, at] = parseLabels(line, at, where);
    if (line[at] !== ' ') throw new Error(`${where}: expected a space before the value`);
    const fields = line.slice(at + 1).split(' ');
    if (fields.length < 1 || fields.length > 2)
      throw new Error(`${where}: expected a value and maybe a timestamp`);
    const value = parseValue(fields[0], where);
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error(`${where}: bad timestamp`);
    const family = familyOf(name, families);
    if (!family) throw new Error(`${where}: sample before its family's TYPE`);
    if (family !== current) throw new Error(`${where}: sample apart from its family ${family.name}`);
    if (family.type === 'counter' && !(value >= 0)) throw new Error(`${where}: a counter below 0`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`${where}: series given twice`);
    seen.add(key);
    family.samples.push({ name, labels, value });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = familyOf(name, families);
  const matches = (family?.samples ?? []).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (matches.length > 1)
    throw new Error(`${name} ${JSON.stringify(labels)}: ${matches.length} series match`);
  return matches[0]?.value;
}
