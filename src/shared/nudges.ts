// Wake-ups between the parts of one server: "there is new work of this kind". A nudge carries no data (the
// database holds the work), so losing one costs at most a poll interval, and many in one turn are one. In one
// process a nudge calls its listeners; in a process started by the supervisor it also goes to the supervisor,
// which passes it on to the processes that listen to its topic, at most once per turn each (supervisor.ts). A
// process tells the supervisor which topics it listens to when it first listens to each.

/** New messages to send (the delivery worker's queue); new events to fan out (the webhook dispatcher's). */
export type NudgeTopic = 'messages' | 'events';

export interface Nudges {
  /** Tells every listener, here and in the server's other processes, that work of `topic` is waiting. */
  send(topic: NudgeTopic): void;
  on(topic: NudgeTopic, listener: () => void): void;
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

const isTopic = (value: unknown): value is NudgeTopic => value === 'messages' || value === 'events';

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

/**
 * Nudges within this process, and through `channel` (a child's IPC channel to its supervisor) when given: at
 * most one message per topic per event-loop turn goes out, and those that come in call the listeners.
 */
export function createNudges(channel?: NodeJS.Process): Nudges {
  const listeners: Record<NudgeTopic, (() => void)[]> = { messages: [], events: [] };
  const outgoing = new Set<NudgeTopic>();
  const tell = (topic: NudgeTopic) => {
    for (const listener of listeners[topic]) listener();
  };
  const connected = () => channel?.connected === true && typeof channel.send === 'function';
  if (channel && connected()) {
    channel.on('message', (message: unknown) => {
      if (isNudgeMessage(message)) tell(message.topic);
    });
  }
  return {
    send(topic) {
      tell(topic);
      if (!connected() || outgoing.has(topic)) return;
      outgoing.add(topic);
      setImmediate(() => {
        outgoing.delete(topic);
        if (connected()) channel!.send!({ pigeon: 'nudge', topic } satisfies NudgeMessage);
      });
    },
    on(topic, listener) {
      listeners[topic].push(listener);
      if (listeners[topic].length === 1 && connected()) {
        channel!.send!({ pigeon: 'listen', topic } satisfies ListenMessage);
      }
    },
  };
}
