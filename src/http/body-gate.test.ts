import { describe, expect, it } from 'vitest';
import { BodyGate } from './body-gate.ts';

describe('the large-body gate lets a few bodies be read at once, in arrival order', () => {
  it('grants up to its permits, queues the rest, and passes a permit on when a holder leaves', async () => {
    const gate = new BodyGate(2);
    const granted: string[] = [];
    const enter = (name: string) => {
      const ticket = gate.enter();
      void ticket.granted.then(() => granted.push(name));
      return ticket;
    };
    const a = enter('a');
    enter('b');
    const c = enter('c');
    const d = enter('d');
    await Promise.resolve();
    expect(granted).toEqual(['a', 'b']);
    expect(gate.waiting).toBe(2);
    // One that gives up its place in line is skipped; leaving twice gives back one permit only.
    c.leave();
    a.leave();
    a.leave();
    await Promise.resolve();
    expect(granted).toEqual(['a', 'b', 'd']);
    expect(gate.waiting).toBe(0);
    d.leave();
    const e = enter('e');
    await e.granted;
    expect(granted).toEqual(['a', 'b', 'd', 'e']);
  });
});
