// Wake-ups between the parts of a server: "there is new work of this kind". A nudge carries no data (the
// database holds the work), so losing one costs at most a poll interval, a duplicate costs one look that finds
// nothing, and many in one turn are one. In one process a nudge calls its listeners; carriers take it to other
// processes: the supervisor's IPC channel (to the processes it started on this machine, see supervisor.ts),
// and on PostgreSQL the database's LISTEN/NOTIFY (to every process on the same schema, on any machine, see
// store/notify.ts). Each carrier gets at most one nudge per topic per event-loop turn, however many were sent
// in it. A process starts hearing a topic from its carriers when it first listens to it.

/**
 * New messages to send (the delivery worker's queue); new events to fan out (the webhook dispatcher's); new
 * balance-alert jobs (the alert worker's).
 */
export type NudgeTopic = 'messages' | 'events' | 'alerts';

export interface Nudges {
  /** Tells every listener, here and in the server's other processes, that work of `topic` is waiting. */
  send(topic: NudgeTopic): void;
  on(topic: NudgeTopic, listener: () => void): void;
}

/** A way nudges travel between processes. */
export interface NudgeCarrier {
  /** Takes a nudge out to the other processes (called at most once per topic per turn). */
  send(topic: NudgeTopic): void;
  /** Starts hearing `topic` from the other processes: `heard` is called for each that comes in. */
  listen(topic: NudgeTopic, heard: () => void): void;
}

/** The message a nudge travels in between processes. */
export interface NudgeMessage {
  pigeon: 'nudge';
  topic: NudgeTopic;
}

/** What a supervised process tells the supervisor when it first listens to a topic. */
export interface ListenMessage {
  pigeon: 'listen';
  topic: NudgeTopic;
}

const isTopic = (value: unknown): value is NudgeTopic =>
  value === 'messages' || value === 'events' || value === 'alerts';

export const isListenMessage = (value: unknown): value is ListenMessage =>
  typeof value === 'object' &&
  value !== null &&
  (value as ListenMessage).pigeon === 'listen' &&
  isTopic((value as ListenMessage).topic);

export const isNudgeMessage = (value: unknown): value is NudgeMessage =>
  typeof value === 'object' &&
  value !== null &&
  (value as NudgeMessage).pigeon === 'nudge' &&
  isTopic((value as NudgeMessage).topic);

/** Nudges through `channel`, a supervised process's IPC channel to its supervisor. */
export function ipcCarrier(channel: NodeJS.Process): NudgeCarrier {
  const heard: Partial<Record<NudgeTopic, () => void>> = {};
  const connected = () => channel.connected === true && typeof channel.send === 'function';
  channel.on('message', (message: unknown) => {
    if (isNudgeMessage(message)) heard[message.topic]?.();
  });
  return {
    send(topic) {
      if (connected()) channel.send!({ pigeon: 'nudge', topic } satisfies NudgeMessage);
    },
    listen(topic, hear) {
      heard[topic] = hear;
      if (connected()) channel.send!({ pigeon: 'listen', topic } satisfies ListenMessage);
    },
  };
}

/**
 * Nudges within this process, and through each of `carriers` to the others: at most one per topic per
 * event-loop turn goes out to each carrier, and those that come in call the listeners.
 */
export function createNudges(carriers: readonly NudgeCarrier[] = []): Nudges {
  const listeners: Record<NudgeTopic, (() => void)[]> = { messages: [], events: [], alerts: [] };
  const outgoing = new Set<NudgeTopic>();
  const tell = (topic: NudgeTopic) => {
    for (const listener of listeners[topic]) listener();
  };
  return {
    send(topic) {
      tell(topic);
      if (carriers.length === 0 || outgoing.has(topic)) return;
      outgoing.add(topic);
      setImmediate(() => {
        outgoing.delete(topic);
        for (const carrier of carriers) carrier.send(topic);
      });
    },
    on(topic, listener) {
      listeners[topic].push(listener);
      if (listeners[topic].length === 1)
        for (const carrier of carriers) carrier.listen(topic, () => tell(topic));
    },
  };
}
