import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { NotificationAnswer } from './balance-alerts.schemas.ts';
import type { BalanceAlertsService } from './balance-alerts.service.ts';

const NotificationBody = Type.Object({
  notification: Type.Object({
    alert_trigger: Type.Optional(Type.String()),
    alert_email: Type.Optional(Type.String()),
    alert_gsm: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    phone_number: Type.Optional(Type.String()),
  }),
});
/** The balance notification: the setting of the balance alerts. */
export function balanceAlertsRoutes(app: App, balanceAlerts: BalanceAlertsService): void {
  app.get('/notification/balance', { schema: { response: NotificationAnswer } }, async (req) =>
    ok({ notification: await balanceAlerts.getNotification(caller(req)) }),
  );
  app.put(
    '/notification/balance',
    { schema: { body: NotificationBody, response: NotificationAnswer } },
    async (req) =>
      ok({ notification: await balanceAlerts.putNotification(caller(req), req.body.notification) }),
  );
}
