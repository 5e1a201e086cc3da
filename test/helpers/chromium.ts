// Debian's Chromium for the console's end-to-end tests: installed by the global setup when missing.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const chromiumPath = '/usr/bin/chromium';

export const chromiumMissing = `${chromiumPath} is missing: install Debian's package (apt-get install -y chromium)`;

/**
 * Debian's Chromium, installed when missing if the tests run as root (as CI does): nothing is downloaded
 * from elsewhere. Otherwise the console's tests fail saying what to install.
 */
export function ensureChromium(): void {
  if (existsSync(chromiumPath) || process.getuid?.() !== 0) return;
  const apt = (args: string[]) =>
    execFileSync('apt-get', args, {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 600_000,
    });
  try {
    apt(['install', '-y', '--no-install-recommends', 'chromium']);
  } catch {
    // Package lists too old for the mirror's current files: read them again once.
    apt(['update']);
    apt(['install', '-y', '--no-install-recommends', 'chromium']);
  }
}
