// Every error of a value against a TypeBox schema as one line `path: message`, the path written as in the
// source (`routes[1].connectors[0]`, `PORT`): how the configuration and the connectors file list what is wrong.
import type { TSchema } from 'typebox';
import type { TLocalizedValidationError } from 'typebox/error';
import { Settings } from 'typebox/system';
import Value from 'typebox/value';

/**
 * TypeBox stops at 8 errors by default, a guard for values from strangers; the configuration and the
 * connectors file come from the operator, who should see every mistake at once.
 */
const maxErrors = 1000;

type SchemaError = TLocalizedValidationError;

/** A JSON pointer (`/routes/1/name`) as a path through `value`: `[1]` into a list, `.name` into a map. */
function pathOf(pointer: string, value: unknown, root: string): string {
  if (pointer === '') return root;
  let path = '';
  let node = value;
  for (const escaped of pointer.slice(1).split('/')) {
    const key = escaped.replaceAll('~1', '/').replaceAll('~0', '~');
    path += Array.isArray(node) ? `[${key}]` : path === '' ? key : `.${key}`;
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return path;
}

/**
 * The errors worth reading: of a value matching no branch of a union, those of the branches of its type
 * (or one line naming the types it may be), and one line per unknown or missing key.
 */
function readable(errors: SchemaError[]): { error: SchemaError; at: string; message: string }[] {
  const hidden = new Set<SchemaError>();
  const messages = new Map<SchemaError, string>();
  for (const union of errors) {
    if (union.keyword !== 'anyOf') continue;
    const branches = errors.filter((e) => e.schemaPath.startsWith(`${union.schemaPath}/anyOf/`));
    const wrongType = branches.filter((e) => e.keyword === 'type' && e.instancePath === union.instancePath);
    for (const e of wrongType) hidden.add(e);
    if (wrongType.length < branches.length) hidden.add(union);
    else
      messages.set(
        union,
        `must be ${wrongType.map((e) => (e.params as { type: string | string[] }).type).join(' or ')}`,
      );
  }
  const lines: { error: SchemaError; at: string; message: string }[] = [];
  for (const error of errors) {
    if (hidden.has(error)) continue;
    if (error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties'))
      lines.push({ error, at: '', message: 'unknown key' });
    else if (error.keyword === 'required') {
      for (const key of (error.params as { requiredProperties: string[] }).requiredProperties)
        lines.push({ error, at: `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, message: 'required' });
    } else if (error.keyword !== 'additionalProperties')
      lines.push({ error, at: '', message: messages.get(error) ?? error.message });
  }
  return lines;
}

/** Every error of `value` against `schema`, one line each; `root` names the value itself. */
export function schemaErrors(schema: TSchema, value: unknown, root: string): string[] {
  const cap = Settings.Get().maxErrors;
  let errors: SchemaError[];
  try {
    Settings.Set({ maxErrors });
    errors = Value.Errors(schema, value);
  } finally {
    Settings.Set({ maxErrors: cap });
  }
  return readable(errors).map(({ error, at, message }) => {
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
    return `${pathOf(error.instancePath + at, value, root)}: ${message}${allowed ? ` (${allowed.join(', ')})` : ''}`;
  });
}
