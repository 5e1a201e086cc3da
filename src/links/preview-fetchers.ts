// Link-preview fetchers and prefetches: they get the redirect (so previews show the real page) but are not
// clicks, so they record nothing and will fire no CLICKER (API.md, "Webhooks").
import type { IncomingHttpHeaders } from 'node:http';

/**
 * User-agent fragments of preview fetchers and crawlers, matched case-insensitively anywhere in the
 * header. Kept to distinctive names: a bare "bot" would also match phone brands such as Cubot, and curl or
 * HTTP libraries are not previews (an integration may follow links on a user's behalf).
 */
export const previewAgentFragments: readonly string[] = [
  // Meta: Facebook, Messenger, Instagram; Apple's iMessage sends "facebookexternalhit/1.1 Facebot Twitterbot/1.0".
  'facebookexternalhit',
  'facebookcatalog',
  'Facebot',
  'meta-externalagent',
  'Twitterbot',
  // Slack: "Slackbot-LinkExpanding 1.0", "Slackbot 1.0", and its image proxy.
  'Slackbot',
  'Slack-ImgProxy',
  // WhatsApp, and Signal, whose clients fetch previews as "WhatsApp/2".
  'WhatsApp',
  'TelegramBot',
  'Discordbot',
  'LinkedInBot',
  // Skype and Teams.
  'SkypeUriPreview',
  'MicrosoftPreview',
  'BingPreview',
  'bingbot',
  'msnbot',
  // Outlook and Office apps probing links (SafeLinks scanning shows up under these names too).
  'Microsoft Office',
  'Microsoft Outlook',
  'ms-office',
  'MSOffice',
  'Applebot',
  'Googlebot',
  'Google-PageRenderer',
  'Google-InspectionTool',
  'GoogleOther',
  'Google-Safety',
  'AdsBot-Google',
  'FeedFetcher-Google',
  // Viber's preview fetcher; its users open links in the system browser, so a human click does not carry it.
  'Viber',
  // Pinterest's fetchers only: the Pinterest app's in-app browser says "[Pinterest/Android]" and is human.
  'Pinterestbot',
  'Pinterest/0.',
  'redditbot',
  'Embedly',
  'Iframely',
  'Snap URL Preview',
  'vkShare',
  'Yahoo Link Preview',
  'Slurp',
  'YandexBot',
  'Baiduspider',
  'DuckDuckBot',
  // Fediverse servers fetching previews: "Mastodon/4.2 (http.rb/5.1; +https://…)".
  'Mastodon',
  'Pleroma',
  'Akkoma',
  'Misskey',
  'Bitlybot',
  // Matrix homeservers fetching URL previews: "Synapse (bot; +https://github.com/matrix-org/synapse)".
  'Synapse (bot',
  'kakaotalk-scrap',
  'Quora Link Preview',
  'FlipboardProxy',
  'Nuzzel',
  'W3C_Validator',
];

const escapeRegExp = (fragment: string): string => fragment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const previewAgentPattern = new RegExp(previewAgentFragments.map(escapeRegExp).join('|'), 'i');

/** Purpose headers of speculative loads: Chrome's `Sec-Purpose: prefetch`, `Purpose: prefetch`, Safari's `X-Purpose: preview`, Firefox's `X-Moz: prefetch`. */
const speculativePurpose = /prefetch|preview|prerender/i;

/**
 * Remembers recent verdicts by user agent: real traffic repeats a few hundred agents, so most requests
 * skip the pattern. Bounded; cleared when full rather than tracking recency, which is cheap and enough.
 */
const verdicts = new Map<string, boolean>();
const maxVerdicts = 2000;
/** Longer agents are matched every time instead of being remembered, so memory stays bounded per entry. */
const maxRememberedAgentLength = 512;

export function isPreviewAgent(userAgent: string): boolean {
  const known = verdicts.get(userAgent);
  if (known !== undefined) return known;
  const verdict = previewAgentPattern.test(userAgent);
  if (userAgent.length <= maxRememberedAgentLength) {
    if (verdicts.size >= maxVerdicts) verdicts.clear();
    verdicts.set(userAgent, verdict);
  }
  return verdict;
}

/**
 * Whether a request is not a human click: a known preview agent, a speculative prefetch, or no user agent
 * at all (every browser sends one; requests without it are automated fetches, such as some messengers'
 * preview fetchers).
 */
export function isPreviewRequest(headers: IncomingHttpHeaders): boolean {
  const userAgent = headers['user-agent'];
  if (userAgent === undefined || userAgent.trim() === '') return true;
  if (isPreviewAgent(userAgent)) return true;
  const purpose = headers['sec-purpose'] ?? headers.purpose ?? headers['x-purpose'] ?? headers['x-moz'];
  return typeof purpose === 'string' && speculativePurpose.test(purpose);
}
