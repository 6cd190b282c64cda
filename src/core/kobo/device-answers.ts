// What this server answers itself to the device's account calls when it does not forward them to Kobo's store.
import { randomInt, randomUUID } from 'node:crypto';
import { CodedError } from '../coded-error.ts';

export class DeviceRequestError extends CodedError<'INVALID'> {}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** /v1/auth/device: fresh tokens for the device (nothing checks them), its UserKey echoed. */
export function deviceAuthentication(body: unknown): Record<string, string> {
  const userKey = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).UserKey : undefined;
  if (userKey === undefined || userKey === null) throw new DeviceRequestError('INVALID', 'UserKey is required');
  return {
    AccessToken: randomAlphanumeric(24),
    RefreshToken: randomAlphanumeric(24),
    TokenType: 'Bearer',
    TrackingId: randomUUID(),
    UserKey: typeof userKey === 'string' ? userKey : JSON.stringify(userKey),
  };
}

/** /v1/analytics/gettests: the device only needs a key back. */
export function analyticsTests(): Record<string, unknown> {
  return { Result: 'Success', TestKey: randomAlphanumeric(24), Tests: null };
}

/** /v1/user/profile for an account that never bought anything from Kobo. */
export function userProfile(): Record<string, unknown> {
  return {
    AffiliateName: 'Grimmory',
    OneStore: false,
    ChildAccount: false,
    LibraryMigrated: true,
    VipMembershipPurchased: true,
    HasPurchased: true,
    HasPurchasedBook: true,
    HasPurchasedAudiobook: false,
    SafeSearch: false,
    AudiobooksEnabled: false,
    OrangeAffiliated: false,
    EligibleForOrangeDeal: false,
    PlatformId: '00000000-0000-0000-0000-000000000001',
    PartnerId: '00000000-0000-0000-0000-000000000001',
    KoboCrmOptInSettings: 'ExplicitlyConsentedNo',
    PrivatePermissions: [],
    LinkedAccounts: [],
  };
}

export function noDeals(): Record<string, unknown> {
  return { Deals: [] };
}

/** Kobo's 0-5 stars as a personal rating out of 10. */
export function ratingFromStars(stars: number): number {
  return Math.max(0, Math.min(10, Math.trunc(stars) * 2));
}

/** Book ids in Kobo paths are numbers for this server's books; anything else is a Kobo store product. */
export function localBookId(value: string): number | undefined {
  return /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/** The answer to a reading-state PUT, in the store's spelling (Grimmory alone answers in camelCase). */
export function stateUpdateResponse(entitlementIds: readonly string[]): Record<string, unknown> {
  const success = (): Record<string, string> => ({ Result: 'Success' });
  return {
    RequestResult: 'Success',
    UpdateResults: entitlementIds.map((id) => ({ EntitlementId: id, CurrentBookmarkResult: success(), StatisticsResult: success(), StatusInfoResult: success() })),
  };
}
