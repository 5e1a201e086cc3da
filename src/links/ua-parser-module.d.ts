// The part of ua-parser-js 1.x (MIT; 2.x is AGPL) that Pigeon uses; it ships no types.
declare module 'ua-parser-js' {
  interface UAResult {
    device: { vendor?: string; model?: string; type?: string };
    os: { name?: string; version?: string };
  }
  export default function UAParser(userAgent: string): UAResult;
}
