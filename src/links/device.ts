// The device behind a click, for CLICKER events: brand, model and operating system from the user agent,
// read by ua-parser-js (maintained; 1.x for its MIT licence).
import UAParser from 'ua-parser-js';

export interface Device {
  brand: string;
  model: string;
  os: string;
}

/** A click path sees the same few hundred user agents over and over: parse each once. */
const cache = new Map<string, Device>();
const maxCached = 5000;

export function deviceOf(userAgent: string | null): Device {
  if (!userAgent) return { brand: '', model: '', os: '' };
  let device = cache.get(userAgent);
  if (!device) {
    const parsed = UAParser(userAgent);
    device = {
      brand: parsed.device.vendor ?? '',
      model: parsed.device.model ?? '',
      os: [parsed.os.name, parsed.os.version].filter(Boolean).join(' '),
    };
    if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
    cache.set(userAgent, device);
  }
  return device;
}
