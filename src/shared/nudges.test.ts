import { describe, expect, it } from 'vitest';
import { createNudges, type NudgeCarrier, type NudgeTopic } from './nudges.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function recordingCarrier() {
  const sent: NudgeTopic[] = [];
  const heard = new Map<NudgeTopic, () => void>();
  const listened: NudgeTopic[] = [];
  const carrier: NudgeCarrier = {
    send: (topic) => sent.push(topic),
    listen: (topic, hear) => {
      listened.push(topic);
      heard.set(topic, hear);
    },
  };
  return { carrier, sent, heard, listened };
}

describe('nudges', () => {
  it('many nudges of a topic in one turn reach each carrier once, after the turn; listeners here hear each', async () => {
    const a = recordingCarrier();
    const b = recordingCarrier();
    const nudges = createNudges([a.carrier, b.carrier]);
    let here = 0;
    nudges.on('messages', () => here++);
    for (let i = 0; i < 1000; i++) nudges.send('messages');
    nudges.send('events');
    expect(here).toBe(1000);
    expect(a.sent).toEqual([]);
    await nextTurn();
    expect(a.sent.sort()).toEqual(['events', 'messages']);
    expect(b.sent.sort()).toEqual(['events', 'messages']);
    nudges.send('messages');
    await nextTurn();
    expect(a.sent.filter((t) => t === 'messages')).toHaveLength(2);
  });

  it('a topic is listened to on each carrier once, and what a carrier hears wakes every listener of it', () => {
    const a = recordingCarrier();
    const nudges = createNudges([a.carrier]);
    const woken: string[] = [];
    nudges.on('events', () => woken.push('first'));
    nudges.on('events', () => woken.push('second'));
    expect(a.listened).toEqual(['events']);
    a.heard.get('events')!();
    expect(woken).toEqual(['first', 'second']);
  });
});
