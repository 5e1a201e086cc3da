// Self-signed certificates for SMSCs served over TLS, made by the openssl command into a temporary folder
// when a test starts: nothing to expire in the repository, and no private key committed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  /** PEM files: the key, and the certificate (self-signed: it is its own CA). */
  keyFile: string;
  certFile: string;
  key: Buffer;
  cert: Buffer;
}

export interface TestCertificates {
  dir: string;
  /** Made for `names` (subjectAltName entries such as DNS:localhost, IP:127.0.0.1). */
  make(label: string, names: string[]): TestCertificate;
  remove(): void;
}

export function testCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-tls-'));
  return {
    dir,
    make(label, names) {
      const keyFile = join(dir, `${label}.key.pem`);
      const certFile = join(dir, `${label}.cert.pem`);
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          keyFile,
          '-out',
          certFile,
          '-days',
          '2',
          '-subj',
          `/CN=${label}`,
          '-addext',
          `subjectAltName=${names.join(',')}`,
        ],
        { stdio: 'ignore' },
      );
      return { keyFile, certFile, key: readFileSync(keyFile), cert: readFileSync(certFile) };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
