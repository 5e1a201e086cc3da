// The orchestrator of the pipeline bench asks its helper processes (SMSC simulator, DLR receiver) for their
// counters over the IPC channel of `fork`: a request names a command, the answer carries the same id.

export interface IpcRequest {
  id: number;
  command: string;
}

export interface IpcAnswer {
  id: number;
  result?: unknown;
  error?: string;
}

/** What a helper says once it listens. */
export interface Ready {
  ready: true;
  port: number;
}

/**
 * The helper's side: answers each request with its handler's result. A helper whose orchestrator is gone
 * (the IPC channel closes) exits, so nothing outlives a bench that was killed.
 */
export function answerRequests(handlers: Record<string, () => unknown>): void {
  process.on('message', (message: IpcRequest) => {
    const handler = handlers[message.command];
    const answer: IpcAnswer = handler
      ? { id: message.id, result: handler() }
      : { id: message.id, error: `unknown command ${message.command}` };
    process.send?.(answer);
  });
  process.on('disconnect', () => process.exit(0));
}

/** Tells the orchestrator where the helper listens. */
export function sayReady(port: number): void {
  const ready: Ready = { ready: true, port };
  process.send?.(ready);
}
