// The webhook event vocabulary (API.md, "Webhooks"): the names of the events, the body each one sends, and
// one builder per body that serializes it as the outbox stores it and the webhooks send it. Every capability
// that writes an event (delivery: DLR, MO, STOP; links: CLICKER; accounts: BALANCE_ALERT) builds its body
// here, and the webhooks' test event is built by the same builders. Imports nothing, so any room can use it.
//
// Builders take the values as their owners hold them (numbers, null for "none") and give the JSON text:
// members in the order SMSFactor sends them, ids as strings, counts as numbers, "none" as ''. They are on
// hot paths (a DLR per message, a CLICKER per click): a plain object literal and one JSON.stringify, no
// checks at run time. Dates come formatted (`src/shared/zoned-time.ts`), to the second like every event:
// `isoSecond` for DLR, MO and STOP (ISO 8601 with the offset, as SMSFactor documents DLR's), `wallTime` for
// CLICKER and BALANCE_ALERT (`Y-m-d H:i:s`, as SMSFactor documents both).

/** The event types, in the order API.md lists them: outbox rows, webhook subscriptions and the route's enum. */
export const eventTypes = ['MO', 'DLR', 'STOP', 'CLICKER', 'BALANCE_ALERT', 'MODERATION'] as const;

export type EventType = (typeof eventTypes)[number];

export const isEventType = (type: string): type is EventType =>
  (eventTypes as readonly string[]).includes(type);

/** A delivery receipt, one per message when its status changes. */
export interface DlrBody {
  /** ISO 8601 with the zone's offset, to the second. */
  date: string;
  /** The DLR status code (`src/sms/dlr-status.ts`). */
  status: number;
  destination: string;
  /** The message's gsmsmsid. */
  message_id: string;
  /** The campaign's ticket. */
  campaign_id: string;
  country_code: string;
}

/** A reply (MO), or a STOP reply, which has the same body. */
export interface MoBody {
  /** ISO 8601 with the zone's offset, to the second. */
  date: string;
  message: string;
  from: string;
  account_id: string;
  /** The gsmsmsid of the last message sent to that number. */
  last_message_id: string;
}

export type StopBody = MoBody;

/** A click of a short link. `gsmsid` (sic) is SMSFactor's spelling. */
export interface ClickerBody {
  campaign_id: string;
  gsmsid: string;
  /** `Y-m-d H:i:s` on the zone's wall clock. */
  date: string;
  long_url: string;
  short_url: string;
  brand: string;
  model: string;
  os: string;
  info1: string;
  info2: string;
  info3: string;
  info4: string;
  clicks_on_link: number;
}

/** Credits fell to or below the account's alert trigger. */
export interface BalanceAlertBody {
  balance: number;
  trigger: number;
  /** `Y-m-d H:i:s` on the zone's wall clock, as SMSFactor sends it. */
  date: string;
}

/**
 * Pigeon's addition (SMSFactor has no such webhook): a campaign held for moderation by a content rule
 * (`pending`), then approved (its messages go out) or refused (cancelled, its cost refunded).
 */
export interface ModerationBody {
  campaign_id: string;
  status: 'pending' | 'approved' | 'refused';
  /** What held it (pending), or the operator's reason (refused); '' for none. */
  reason: string;
  /** `Y-m-d H:i:s` on the zone's wall clock. */
  date: string;
}

const json = JSON.stringify;

/** The MODERATION body of a campaign's moderation step. */
export function moderationPayload(
  campaignId: number,
  status: ModerationBody['status'],
  reason: string,
  date: string,
): string {
  const body: ModerationBody = { campaign_id: String(campaignId), status, reason, date };
  return json(body);
}

/** The DLR body of a message: `gsmsmsid` null (none yet) and an unknown country are sent as ''. */
export function dlrPayload(
  date: string,
  status: number,
  destination: string,
  gsmsmsid: string | null,
  campaignId: number,
  countryCode: string | undefined,
): string {
  const body: DlrBody = {
    date,
    status,
    destination,
    message_id: gsmsmsid ?? '',
    campaign_id: String(campaignId),
    country_code: countryCode ?? '',
  };
  return json(body);
}

/** The MO or STOP body of a reply: `lastGsmsmsid` is the gsmsmsid of the message it answers ('' if none). */
export function replyPayload(
  date: string,
  text: string,
  from: string,
  accountId: number,
  lastGsmsmsid: string | null,
): string {
  const body: MoBody = {
    date,
    message: text,
    from,
    account_id: String(accountId),
    last_message_id: lastGsmsmsid ?? '',
  };
  return json(body);
}

/** The BALANCE_ALERT body: the balance after the debit and the trigger it reached. */
export function balanceAlertPayload(balance: number, trigger: number, date: string): string {
  const body: BalanceAlertBody = { balance, trigger, date };
  return json(body);
}

// CLICKER: thirteen members, of which only the date, the device and the count change from one click of a
// link to the next. The rest is serialized once per link, when the link is resolved, and a click's payload
// is a handful of concatenations: JSON.stringify of the whole object for every click was a tenth of the
// click fold's time. The members are those of `ClickerBody`, in its order.

/** What a CLICKER event says of the link and its recipient: fixed when the campaign is sent. */
export interface ClickerLink {
  campaignId: number;
  gsmsmsid: string;
  longUrl: string;
  shortUrl: string;
  info1: string;
  info2: string;
  info3: string;
  info4: string;
}

/** The clicking device, as read from the user agent ('' for what it does not tell). */
export interface ClickerDevice {
  brand: string;
  model: string;
  os: string;
}

/** A link's CLICKER body, serialized around the members that change per click. */
export interface ClickerTemplate {
  head: string;
  middle: string;
  tail: string;
}

export function clickerTemplate(link: ClickerLink): ClickerTemplate {
  return {
    head: `{"campaign_id":${json(String(link.campaignId))},"gsmsid":${json(link.gsmsmsid)},"date":`,
    middle: `,"long_url":${json(link.longUrl)},"short_url":${json(link.shortUrl)},`,
    tail:
      `,"info1":${json(link.info1)},"info2":${json(link.info2)},"info3":${json(link.info3)},` +
      `"info4":${json(link.info4)},"clicks_on_link":`,
  };
}

/** Devices come from a cache (one object per user agent), so each is serialized once. */
const serializedDevices = new WeakMap<ClickerDevice, string>();

function deviceMembers(device: ClickerDevice): string {
  let members = serializedDevices.get(device);
  if (members === undefined) {
    members = `"brand":${json(device.brand)},"model":${json(device.model)},"os":${json(device.os)}`;
    serializedDevices.set(device, members);
  }
  return members;
}

/** The CLICKER body of one click: `date` as `Y-m-d H:i:s`, the clicking device, the click's number on its link. */
export function clickerPayload(
  template: ClickerTemplate,
  date: string,
  device: ClickerDevice,
  clicksOnLink: number,
): string {
  return `${template.head}${json(date)}${template.middle}${deviceMembers(device)}${template.tail}${clicksOnLink}}`;
}
