// The CLICKER webhook body (API.md, "Webhooks"): thirteen members, of which only the date, the device and
// the count change from one click of a link to the next. The rest is serialized once per link, when the
// link is resolved, and a click's payload is a handful of concatenations: JSON.stringify of the whole
// object for every click was a tenth of the fold's time.
import type { Device } from './device.ts';

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

/** A link's payload, serialized around the members that change per click. */
export interface ClickerTemplate {
  head: string;
  middle: string;
  tail: string;
}

const json = JSON.stringify;

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
const serializedDevices = new WeakMap<Device, string>();

function deviceMembers(device: Device): string {
  let members = serializedDevices.get(device);
  if (members === undefined) {
    members = `"brand":${json(device.brand)},"model":${json(device.model)},"os":${json(device.os)}`;
    serializedDevices.set(device, members);
  }
  return members;
}

/** The payload of one click: `date` as `Y-m-d H:i:s`, the clicking device, and the click's number on its link. */
export function clickerPayload(
  template: ClickerTemplate,
  date: string,
  device: Device,
  clicksOnLink: number,
): string {
  return `${template.head}${json(date)}${template.middle}${deviceMembers(device)}${template.tail}${clicksOnLink}}`;
}
