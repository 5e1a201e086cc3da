import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { AccountPricesAnswer } from './prices.schemas.ts';
import type { PricesService } from './prices.service.ts';

export function pricesRoutes(app: App, prices: PricesService): void {
  app.get('/account/prices', { schema: { response: AccountPricesAnswer } }, async (req) =>
    ok(await prices.accountPrices(caller(req))),
  );
}
