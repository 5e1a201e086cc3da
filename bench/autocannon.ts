// autocannon, the HTTP load of the benches. It is CommonJS without types: loaded through require, with the
// fields of its result the benches read typed here, once.
import { createRequire } from 'node:module';

export interface AutocannonResult {
  requests: { average: number; total: number; sent: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
}

export const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Record<string, unknown>,
) => Promise<AutocannonResult>;
