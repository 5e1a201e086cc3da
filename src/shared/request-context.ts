// Who is behind the work running now, without every service signature carrying it: the HTTP layer runs each
// request inside its context (the request itself: its `auth`, set by the auth hook, and its `ip`), the CLI runs
// its commands as `cli`, and whatever runs outside both (workers, timers) is Pigeon's own. Read by the audit
// log (src/audit) when it writes an entry.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuthContext } from './auth-context.ts';

/** What the work in progress was started by: a request (the Fastify request fits), or the operator's CLI. */
export interface RequestContext {
  readonly ip?: string;
  readonly auth?: AuthContext;
  /** Set by the CLI: its work has no request. */
  readonly cli?: true;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `work` (and everything it starts, awaited or not) inside `context`. */
export function runInContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

/** The context of the work running now; undefined outside a request and the CLI (Pigeon's own work). */
export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}
