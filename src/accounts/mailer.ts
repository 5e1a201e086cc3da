// E-mail out through SMTP (nodemailer), for balance alerts.
import nodemailer, { type NodemailerError } from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the server accepted the message; rejects with a MailError otherwise. */
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** A refused or failed send; `permanent` when the server rejected the message for good (an SMTP 5xx). */
export class MailError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/**
 * A mailer for `smtp://user:pass@host:587` (STARTTLS when the server offers it) or `smtps://…:465`. A
 * connection per message: alerts are rare, and a fresh connection needs no pool health to watch.
 * Timeouts are short so a dead server fails an attempt well within the job's lease.
 */
export function createSmtpMailer(options: { url: string; from: string }): Mailer {
  const transport = nodemailer.createTransport({
    url: options.url,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    async send(mail) {
      try {
        await transport.sendMail({ from: options.from, to: mail.to, subject: mail.subject, text: mail.text });
      } catch (error) {
        const e = error as NodemailerError;
        const reply = e.responseCode ? ` (SMTP ${e.responseCode})` : e.code ? ` (${e.code})` : '';
        throw new MailError(`${e.message}${reply}`, e.permanent === true);
      }
    },
    close() {
      transport.close();
    },
  };
}
