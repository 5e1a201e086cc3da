// What the filtered lists (campaigns, the audit log) share: their filters kept in the page's address, and a
// -7 naming one of the API's parameters shown beside the form field it came from.
import { ApiFailure, errorText, fieldOfError } from '../api.ts';

/** `path` with the filters that differ from their default and a page's `start` as its query. */
export function filterAddress(
  path: string,
  filters: Record<string, string>,
  start: number,
  defaults: Record<string, string> = {},
): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (value && value !== defaults[key]) params.set(key, value);
  }
  if (start > 0) params.set('start', String(start));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * The API parameter a list's error names (`wrong`, undefined for any other error), and the message to show
 * beside a form field: `formField` maps each parameter the API may name to the field it comes from.
 */
export function filterErrors<F extends string>(error: unknown, formField: Record<string, F>) {
  const wrong = fieldOfError(error, Object.keys(formField));
  return {
    wrong,
    errorOf: (field: F) =>
      wrong && formField[wrong] === field
        ? error instanceof ApiFailure
          ? error.details
          : errorText(error)
        : undefined,
  };
}
