// The one logger shape the workers and jobs take: pino's Logger fits it, and so does a test's recorder.
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Drops every line: for a part whose caller has not handed it a logger yet. */
export const silentLog: Log = { info() {}, warn() {}, error() {} };
