// A real SMTP server on loopback (the smtp-server package) that keeps what it receives, for tests of
// e-mail sent through SMTP. It can go down and come back on the same port, and can refuse messages.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope, as the client gave it. */
  mailFrom: string;
  rcptTo: string[];
  /** The credentials the client logged in with, if any. */
  user: string | undefined;
  password: string | undefined;
  /** Header names in lower case, folded lines joined. */
  headers: Record<string, string>;
  /** The body, with quoted-printable undone. */
  text: string;
}

/** Undoes quoted-printable: soft line breaks and =XX escapes. */
function decodeQuotedPrintable(body: string): string {
  const bytes = Buffer.from(
    body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
  return bytes.toString('utf8');
}

function parse(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const body = split === -1 ? '' : raw.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const qp = /quoted-printable/i.test(headers['content-transfer-encoding'] ?? '');
  return { headers, text: (qp ? decodeQuotedPrintable(body) : body).replace(/\r\n/g, '\n') };
}

export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  /** Messages refused so far (answered with `refuseWith`). */
  refused = 0;
  /** While set, every message is answered with this SMTP code instead of being kept. */
  refuseWith: number | undefined;
  private server: SMTPServer | undefined;
  private boundPort = 0;

  private create(): SMTPServer {
    return new SMTPServer({
      // Plain text on loopback: no STARTTLS to offer, and login allowed without it.
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authOptional: true,
      logger: false,
      onAuth: (auth, _session, callback) =>
        callback(null, { user: `${auth.username}\u0000${auth.password}` }),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (this.refuseWith !== undefined) {
            this.refused++;
            const error = Object.assign(new Error('refused by the test sink'), {
              responseCode: this.refuseWith,
            });
            callback(error);
            return;
          }
          const [user, password] =
            typeof session.user === 'string' ? session.user.split('\u0000') : [undefined, undefined];
          const envelope = session.envelope;
          this.mails.push({
            mailFrom: envelope.mailFrom ? envelope.mailFrom.address : '',
            rcptTo: envelope.rcptTo.map((r) => r.address),
            user,
            password,
            ...parse(Buffer.concat(chunks).toString('utf8')),
          });
          callback(null);
        });
      },
    });
  }

  /** Listens on 127.0.0.1: on a free port the first time, then on the same port again. */
  async listen(): Promise<this> {
    const server = this.create();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.boundPort, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (server.server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  get port(): number {
    return this.boundPort;
  }

  /** An SMTP_URL reaching this sink, with the given login. */
  url(user = 'pigeon', password = 'secret'): string {
    return `smtp://${user}:${password}@127.0.0.1:${this.boundPort}`;
  }

  /** Stops listening (the port then refuses connections) until `listen` is called again. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
