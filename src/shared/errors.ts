// One error type for everything the API answers with a negative status (API.md, "Envelope").

export const Status = {
  ok: 1,
  auth: -1,
  xml: -2,
  credits: -3,
  delay: -4,
  notFound: -5,
  json: -6,
  data: -7,
  unknown: -99,
} as const;

const defaultMessages: Record<number, string> = {
  [Status.auth]: 'Authentication error',
  [Status.xml]: 'XML error',
  [Status.credits]: 'Not enough credits',
  [Status.delay]: 'Incorrect delay',
  [Status.notFound]: 'Resource not found',
  [Status.json]: 'JSON error',
  [Status.data]: 'Data error',
  [Status.unknown]: 'Unknown error',
};

/** The Retry-After header of an answer that asks to come back: whole seconds, at least 1. */
export const retryAfter = (seconds: number): Record<string, string> => ({
  'retry-after': String(Math.max(1, seconds)),
});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly details: string,
    /** HTTP code: API errors answer 200 like the reference service; transport failures keep theirs. */
    readonly httpCode = 200,
    message = defaultMessages[status] ?? 'Error',
    /** HTTP headers of the answer, such as Retry-After on a 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  static auth = (details: string) => new ApiError(Status.auth, details);
  /**
   * HTTP 429 with the envelope's `status` and Retry-After: a limit (rate, failed sign-ins, queue depth) says
   * when to come back rather than refusing for good.
   */
  static tooManyRequests = (status: number, details: string, retryAfterS: number) =>
    new ApiError(status, details, 429, 'Too many requests', retryAfter(retryAfterS));
  static notFound = (details: string) => new ApiError(Status.notFound, details);
  static data = (details: string) => new ApiError(Status.data, details);
}
