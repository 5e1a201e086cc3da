// The console is a client of Pigeon's own API: every call goes to the same routes a token would use, signed
// in by the session cookie, with the session's CSRF token on every call, reads included (the API refuses a
// session's request without it: some GET routes change things). So the page loads nothing from the API by
// plain navigation (a link, an <img>, an EventSource): everything goes through `api`. Errors come back in
// the API's envelope (status, message, details) and are thrown as ApiFailure for the page to show.

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: string,
    readonly httpCode: number,
  ) {
    super(details ? `${message}: ${details}` : message);
  }
}

let csrfToken = '';
/** Called once the session is known: every call carries this token. */
export function useCsrfToken(token: string): void {
  csrfToken = token;
}

type Query = Record<string, string | number | undefined | null>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/** Listeners told when a call answers -1 (the session ended): the page goes back to sign-in. */
const signedOutListeners = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/**
 * Listeners told when a call is refused for the user's role (-1, "may not do this"): the role changed since
 * the page read its session, which the page reads again so its controls follow the role it has now.
 */
const refusedListeners = new Set<() => void>();
export function onRoleRefused(listener: () => void): () => void {
  refusedListeners.add(listener);
  return () => refusedListeners.delete(listener);
}

export async function api<T = Record<string, unknown>>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: { query?: Query; body?: unknown } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiFailure(-99, 'Pigeon does not answer', 'check your connection and try again', 0);
  }
  let payload: Record<string, unknown>;
  try {
    payload = (await response.json()) as Record<string, unknown>;
  } catch {
    throw new ApiFailure(-99, `HTTP ${response.status}`, 'the answer was not JSON', response.status);
  }
  const status = Number(payload.status);
  if (!Number.isFinite(status) || status < 0 || response.status >= 400) {
    const failure = new ApiFailure(
      Number.isFinite(status) ? status : -99,
      String(payload.message ?? `HTTP ${response.status}`),
      String(payload.details ?? ''),
      response.status,
    );
    if (failure.status === -1 && /session/.test(failure.details)) for (const l of signedOutListeners) l();
    else if (failure.status === -1 && /may not do this/.test(failure.details))
      for (const l of refusedListeners) l();
    throw failure;
  }
  return payload as T;
}

/** The text to show for an error thrown by `api` (or anything else). */
export function errorText(error: unknown): string {
  if (error instanceof ApiFailure) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** Field names a -7 error's details mention, so a form can show the message next to that field. */
export function fieldOfError(error: unknown, fields: readonly string[]): string | undefined {
  if (!(error instanceof ApiFailure)) return undefined;
  const text = `${error.details} ${error.message}`.toLowerCase();
  return fields.find((f) => new RegExp(`\\b${f.toLowerCase()}\\b`).test(text));
}
