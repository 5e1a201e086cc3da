// What the balance notification's routes answer (balance-alerts.routes.ts); `NotificationView` is the
// balance alerts service's answer and the console's. Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer } from '../http/response-schemas.ts';

/** The balance notification setting: every value a string, as SMSFactor echoes it. */
export const Notification = Type.Object({
  alert_trigger: Type.String(),
  alert_email: Type.String(),
  alert_gsm: Type.String(),
  email: Type.String(),
  phone_number: Type.String(),
});
export type NotificationView = Static<typeof Notification>;

export const NotificationAnswer = answer({ notification: Notification });
