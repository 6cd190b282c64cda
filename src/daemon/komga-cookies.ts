// The cookies of a Komga session, named as Komga names them (Komelia looks for these two names, and keeps a cookie
// only when its path is the server address it was given, so the path is the Komga API root, `<basePath>/komga`).
import { SESSION_DAYS } from '../core/komga/sessions.ts';

export const SESSION_COOKIE = 'KOMGA-SESSION';
export const REMEMBER_ME_COOKIE = 'komga-remember-me';

/** The session token a request carries in either cookie, if any. */
export function sessionToken(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if ((name === SESSION_COOKIE || name === REMEMBER_ME_COOKIE) && /^[A-Za-z0-9_-]{20,100}$/.test(value)) return value;
  }
  return undefined;
}

function cookie(name: string, value: string, path: string, secure: boolean, maxAge?: number): string {
  return [`${name}=${value}`, `Path=${path}`, ...(maxAge !== undefined ? [`Max-Age=${maxAge}`] : []), 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])].join('; ');
}

/** Set-Cookie values for a new session: the session cookie, and the lasting one when the client asked to be remembered. */
export function sessionCookies(token: string, path: string, rememberMe: boolean, secure: boolean): string[] {
  return [cookie(SESSION_COOKIE, token, path, secure), ...(rememberMe ? [cookie(REMEMBER_ME_COOKIE, token, path, secure, SESSION_DAYS * 24 * 3600)] : [])];
}

/** Set-Cookie values that remove both cookies. */
export function clearedCookies(path: string, secure: boolean): string[] {
  return [cookie(SESSION_COOKIE, '', path, secure, 0), cookie(REMEMBER_ME_COOKIE, '', path, secure, 0)];
}
