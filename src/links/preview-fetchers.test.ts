import { describe, expect, it } from 'vitest';
import { isPreviewRequest } from './preview-fetchers.ts';

const chromeAndroid =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const safariIos =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const cubot =
  'Mozilla/5.0 (Linux; Android 12; CUBOT KINGKONG 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36';

describe('preview fetchers are recognised and humans are not', () => {
  it.each([
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'facebookexternalhit/1.1 Facebot Twitterbot/1.0',
    'Twitterbot/1.0',
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'WhatsApp/2.23.20.0 A',
    'TelegramBot (like TwitterBot)',
    'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
    'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
    'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    'Viber/20.3.0 CFNetwork/1390 Darwin/22.0.0',
    'Pinterest/0.2 (+https://www.pinterest.com/bot.html)',
    'Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)',
    'Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)',
    'Iframely/1.3.1 (+https://iframely.com/docs/about)',
    'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328; Pro)',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)) Chrome/56.0.2924.87 Safari/537.36',
    'Mozilla/5.0 (compatible; Snap URL Preview Service; bot; snapchat; https://developers.snap.com/robots)',
    'Mozilla/5.0 (compatible; vkShare; +http://vk.com/dev/Share)',
    'Mozilla/5.0 (compatible; Yahoo Link Preview; https://help.yahoo.com/kb/mail/yahoo-link-preview-SLN23615.html)',
    'http.rb/5.1.1 (Mastodon/4.2.1; +https://mastodon.social/)',
    'bitlybot/3.0 (+http://bit.ly/)',
  ])('%s is a preview', (userAgent) => {
    expect(isPreviewRequest({ 'user-agent': userAgent })).toBe(true);
  });

  it.each([chromeAndroid, safariIos, cubot, 'curl/8.5.0'])('%s is a click', (userAgent) => {
    expect(isPreviewRequest({ 'user-agent': userAgent })).toBe(false);
  });

  it('the same agent gets the same verdict when asked again (remembered verdicts)', () => {
    expect(isPreviewRequest({ 'user-agent': 'Twitterbot/1.0' })).toBe(true);
    expect(isPreviewRequest({ 'user-agent': chromeAndroid })).toBe(false);
    expect(isPreviewRequest({ 'user-agent': chromeAndroid })).toBe(false);
  });

  it('speculative loads are not clicks, whatever the browser', () => {
    expect(isPreviewRequest({ 'user-agent': chromeAndroid, 'sec-purpose': 'prefetch' })).toBe(true);
    expect(isPreviewRequest({ 'user-agent': chromeAndroid, 'sec-purpose': 'prefetch;prerender' })).toBe(true);
    expect(isPreviewRequest({ 'user-agent': chromeAndroid, purpose: 'prefetch' })).toBe(true);
    expect(isPreviewRequest({ 'user-agent': safariIos, 'x-purpose': 'preview' })).toBe(true);
  });

  it('a request without a user agent is not a click', () => {
    expect(isPreviewRequest({})).toBe(true);
    expect(isPreviewRequest({ 'user-agent': '  ' })).toBe(true);
  });
});
