// Numbers and contacts read in the browser from a CSV file or pasted text: nothing is uploaded but what the
// API is then sent. Spreadsheets export with commas, semicolons (European locales) or tabs, with or without
// a header, with or without quotes; all of these read here.
import { useState } from 'preact/hooks';
import { Field } from './ui.tsx';

/** The separator a CSV text uses: the one of comma, semicolon and tab its first line holds most of. */
function separatorOf(text: string): string {
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  let best = ',';
  let most = 0;
  for (const candidate of [',', ';', '\t']) {
    const count = firstLine.split(candidate).length - 1;
    if (count > most) {
      best = candidate;
      most = count;
    }
  }
  return best;
}

/** Rows of cells (RFC 4180 quoting: `"a ""b"", c"` is one cell); blank lines are skipped. */
export function parseCsv(text: string, separator = separatorOf(text)): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  const endRow = () => {
    row.push(cell);
    if (row.some((c) => c.trim() !== '')) rows.push(row.map((c) => c.trim()));
    row = [];
    cell = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell.trim() === '') {
      quoted = true;
      cell = '';
    } else if (ch === separator) {
      row.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) endRow();
  return rows;
}

const numberColumnNames = ['number', 'phone', 'destination', 'gsm', 'mobile', 'value'];
/** A header cell: text with letters and no run of digits long enough to be a phone number. */
const looksLikeHeader = (row: string[]) =>
  row.some((c) => /[a-z]/i.test(c)) && !row.some((c) => /\d{6,}/.test(c.replace(/[\s+().-]/g, '')));

export interface ContactRow {
  value: string;
  info1?: string;
  info2?: string;
  info3?: string;
  info4?: string;
}

/**
 * Contacts from CSV rows: the number in the column named number/phone/destination/gsm (else the first), the
 * columns named info1…info4 (else the next four, in order). A first row that reads as a header is used as
 * one; `header` says whether there was one.
 */
export function contactsOf(rows: string[][]): { contacts: ContactRow[]; header: string[] | null } {
  if (rows.length === 0) return { contacts: [], header: null };
  const first = rows[0].map((c) => c.toLowerCase());
  const header = looksLikeHeader(rows[0]) ? first : null;
  let numberAt = 0;
  const infoAt: number[] = [1, 2, 3, 4];
  if (header) {
    const named = header.findIndex((c) => numberColumnNames.includes(c));
    numberAt = named >= 0 ? named : 0;
    const others = header.map((_, i) => i).filter((i) => i !== numberAt);
    for (let n = 1; n <= 4; n++) {
      const at = header.indexOf(`info${n}`);
      infoAt[n - 1] = at >= 0 ? at : (others[n - 1] ?? -1);
    }
  }
  const contacts: ContactRow[] = [];
  for (const row of header ? rows.slice(1) : rows) {
    const contact: ContactRow = { value: row[numberAt] ?? '' };
    for (let n = 1; n <= 4; n++) {
      const value = infoAt[n - 1] >= 0 ? row[infoAt[n - 1]] : undefined;
      if (value !== undefined && value !== '') contact[`info${n}` as 'info1'] = value;
    }
    contacts.push(contact);
  }
  return { contacts, header: header ? rows[0] : null };
}

/** Numbers typed or pasted: one a line, or separated by commas, semicolons or tabs. */
export function numbersOf(text: string): string[] {
  return text
    .split(/[\n\r,;\t]+/)
    .map((n) => n.trim())
    .filter((n) => n !== '');
}

/** Reads a file as text in the browser. */
export function readFileText(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result ?? ''));
    reader.onerror = () => reject(reader.error ?? new Error(`could not read ${file.name}`));
    reader.readAsText(file);
  });
}

/** A labelled file input for a CSV file: hands its rows to `onRows`, or says why it could not read it. */
export function CsvFileField({
  label,
  hint,
  onRows,
  disabled,
}: {
  label: string;
  hint?: string;
  onRows: (rows: string[][], fileName: string) => void;
  disabled?: boolean;
}) {
  const [error, setError] = useState('');
  return (
    <Field label={label} hint={hint} error={error}>
      {(id, describedBy) => (
        <input
          id={id}
          type="file"
          accept=".csv,.txt,text/csv,text/plain"
          aria-describedby={describedBy}
          disabled={disabled}
          onChange={async (event) => {
            const input = event.currentTarget as HTMLInputElement;
            const file = input.files?.[0];
            if (!file) return;
            setError('');
            try {
              const rows = parseCsv(await readFileText(file));
              if (rows.length === 0) setError(`${file.name} is empty`);
              else onRows(rows, file.name);
            } catch (e) {
              setError(e instanceof Error ? e.message : String(e));
            }
            // The same file chosen again (after an edit) is read again.
            input.value = '';
          }}
        />
      )}
    </Field>
  );
}
