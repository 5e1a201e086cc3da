// The DLR status codes of the SMSFactor API, as every capability speaks them: campaigns count them, delivery
// records them from submits and receipts, webhooks carry them in DLR events.
export const DlrStatus = {
  notSent: 0,
  sent: 1,
  notDelivered: 2,
  delivered: 3,
  notAllowed: 4,
  invalidDestination: 5,
  invalidSender: 6,
  routeNotAvailable: 7,
  rejected: 9,
  networkError: 11,
  expired: 12,
} as const;
