// Sends one book file as an attachment through an SMTP account (nodemailer), the file streamed from disk.
import { basename } from 'node:path';
import type { SmtpAccount } from './providers.ts';

export interface BookMail {
  to: string;
  title: string;
  filePath: string;
}

export const MAIL_TIMEOUT_MS = 60_000;

/** Port 465 speaks TLS from the first byte; otherwise STARTTLS when asked for (then required), else plain. */
export function transportOptions(account: SmtpAccount): Record<string, unknown> {
  const implicitTls = account.port === 465;
  return {
    host: account.host,
    port: account.port,
    secure: implicitTls,
    requireTLS: !implicitTls && account.startTls,
    ignoreTLS: !implicitTls && !account.startTls,
    ...(account.auth && account.username ? { auth: { user: account.username, pass: account.password ?? '' } } : {}),
    connectionTimeout: MAIL_TIMEOUT_MS,
    greetingTimeout: MAIL_TIMEOUT_MS,
    socketTimeout: MAIL_TIMEOUT_MS,
  };
}

export function mailBody(title: string): string {
  return `Hello,\n\nYou have received a book from Bindery. Please find the attached file titled '${title}' for your reading pleasure.\n\nEnjoy your book.\n`;
}

export async function sendBookMail(account: SmtpAccount, mail: BookMail, tls: { rejectUnauthorized?: boolean } = {}): Promise<void> {
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({ ...transportOptions(account), tls } as Parameters<typeof createTransport>[0]);
  try {
    await transport.sendMail({
      from: account.fromAddress || account.username || undefined,
      to: mail.to,
      subject: `Your Book from Bindery: ${mail.title}`,
      text: mailBody(mail.title),
      attachments: [{ filename: basename(mail.filePath), path: mail.filePath }],
    });
  } finally {
    transport.close();
  }
}
