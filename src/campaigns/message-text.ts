// The text each recipient receives: short links in place of `<-short->`, the opt-out mention for
// marketing, and a list contact's fields in place of `[info1]`…`[info4]`.

export const shortMarker = '<-short->';
export const stopMarker = '<-stop->';
export type Pushtype = 'alert' | 'marketing';

export function countMarkers(text: string): number {
  let count = 0;
  for (let at = text.indexOf(shortMarker); at >= 0; at = text.indexOf(shortMarker, at + shortMarker.length)) {
    count++;
  }
  return count;
}

/**
 * Marketing texts carry the opt-out mention: where the first `<-stop->` marker stands, else appended on a
 * new line (a line break costs one character, as a space would, and reads better on a phone). Alert
 * texts carry none, so their markers are removed, as are extra markers beyond the first.
 */
export function withStopMention(text: string, pushtype: Pushtype, mention: string): string {
  const at = text.indexOf(stopMarker);
  if (pushtype === 'alert') return at < 0 ? text : text.split(stopMarker).join('');
  if (at >= 0) {
    const before = text.slice(0, at);
    const after = text
      .slice(at + stopMarker.length)
      .split(stopMarker)
      .join('');
    return `${before}${mention}${after}`;
  }
  const separator = text === '' || /\s$/.test(text) ? '' : '\n';
  return `${text}${separator}${mention}`;
}

export interface ContactFields {
  info1: string | null;
  info2: string | null;
  info3: string | null;
  info4: string | null;
}

/** A contact's fields as the API answers them: an unset field is an empty string. */
export function infoOut(c: ContactFields): { info1: string; info2: string; info3: string; info4: string } {
  return { info1: c.info1 ?? '', info2: c.info2 ?? '', info3: c.info3 ?? '', info4: c.info4 ?? '' };
}

const infoPattern = /\[info([1-4])\]/g;

/** A text cut at its link markers once, then rendered per recipient without searching it again. */
export interface Template {
  /** The text around the markers: one more piece than there are links. */
  pieces: string[];
  /** Whether any piece holds an `[infoN]` field (list campaigns only substitute then). */
  hasFields: boolean;
}

export function compileTemplate(text: string): Template {
  const pieces = text.split(shortMarker);
  return { pieces, hasFields: pieces.some((p) => /\[info[1-4]\]/.test(p)) };
}

/**
 * The final text for one recipient: `urls[k]` replaces the k-th marker. Contact fields are substituted in
 * the pieces, never in the inserted links, and in one pass, so a field's value is never itself read as a
 * marker or as another field.
 */
export function render(template: Template, urls: readonly string[], contact?: ContactFields): string {
  const { pieces } = template;
  const fill =
    contact && template.hasFields
      ? (piece: string) =>
          piece.replace(infoPattern, (_m, n: string) => contact[`info${n}` as keyof ContactFields] ?? '')
      : undefined;
  let out = fill ? fill(pieces[0]) : pieces[0];
  for (let k = 1; k < pieces.length; k++) {
    out += urls[k - 1];
    out += fill ? fill(pieces[k]) : pieces[k];
  }
  return out;
}
