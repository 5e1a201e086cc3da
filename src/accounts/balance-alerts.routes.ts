import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
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
const Notification = Type.Object({
  alert_trigger: Type.String(),
  alert_email: Type.String(),
  alert_gsm: Type.String(),
  email: Type.String(),
  phone_number: Type.String(),
});

/** The balance notification: the setting of the balance alerts. */
export function balanceAlertsRoutes(app: App, balanceAlerts: BalanceAlertsService): void {
  app.get(
    '/notification/balance',
    { schema: { response: answer({ notification: Notification }) } },
    async (req) => ok({ notification: await balanceAlerts.getNotification(caller(req)) }),
  );
  app.put(
    '/notification/balance',
    { schema: { body: NotificationBody, response: answer({ notification: Notification }) } },
    async (req) =>
      ok({ notification: await balanceAlerts.putNotification(caller(req), req.body.notification) }),
  );
}
