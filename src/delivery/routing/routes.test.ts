import { describe, expect, it } from 'vitest';
import { findRoute, type RoutedMessage } from './routes.ts';

const routes = [
  { name: 'promo', match: { sender: ['PROMO'], pushtype: ['marketing' as const] } },
  { name: 'vip', match: { account: [7] } },
  { name: 'mobile-fr', match: { prefix: ['336', '337'] } },
  { name: 'belgium', match: { country: ['BE'] } },
];

const message = (overrides: Partial<RoutedMessage>): RoutedMessage => ({
  destination: '33612345678',
  country: 'FR',
  sender: 'Shop',
  pushtype: 'alert',
  accountId: 1,
  ...overrides,
});

describe('findRoute', () => {
  it('takes the first route whose every criterion accepts the message, in the order given', () => {
    expect(findRoute(routes, message({}))?.name).toBe('mobile-fr');
    // Account 7 matches `vip` before the prefix rule below it.
    expect(findRoute(routes, message({ accountId: 7 }))?.name).toBe('vip');
  });

  it('a criterion with several values accepts any of them; several criteria must all accept', () => {
    expect(findRoute(routes, message({ destination: '33712345678' }))?.name).toBe('mobile-fr');
    // Sender matches `promo`, pushtype does not: the next route decides.
    expect(findRoute(routes, message({ sender: 'Promo', pushtype: 'alert' }))?.name).toBe('mobile-fr');
    expect(findRoute(routes, message({ sender: 'promo', pushtype: 'marketing' }))?.name).toBe('promo');
  });

  it('matches the country of the destination and compares senders without case', () => {
    expect(findRoute(routes, message({ destination: '32470123456', country: 'BE' }))?.name).toBe('belgium');
    expect(findRoute(routes, message({ sender: 'PrOmO', pushtype: 'marketing' }))?.name).toBe('promo');
  });

  it('no route for a message no rule accepts; a rule on sender never takes a message without one', () => {
    expect(findRoute(routes, message({ destination: '4915112345678', country: 'DE' }))).toBeUndefined();
    expect(findRoute([routes[0]], message({ sender: null, pushtype: 'marketing' }))).toBeUndefined();
  });

  it('a route without criteria takes every message', () => {
    expect(findRoute([{ name: 'all', match: {} }], message({ sender: null }))?.name).toBe('all');
  });
});
