// Runs metadata providers against a fake site: the shared outgoing client allowed onto 127.0.0.1, every provider's
// base URL pointed at the site, each provider switched on.
import { createHttpClient, type HttpClient, type OutgoingRequest } from '../../src/core/net/http-client.ts';
import { createProviderContext, type ProviderRuntime } from '../../src/core/metadata/provider-context.ts';
import type { MetadataProvider, ProviderContext } from '../../src/core/metadata/provider.ts';
import { PROVIDER_IDS } from '../../src/core/metadata/provider.ts';
import type { FakeSite } from './fake-site.ts';

export const ALL_ON: Record<string, unknown> = {
  amazon: { enabled: true, domain: 'com', cookie: null },
  goodReads: { enabled: true },
  audible: { enabled: true, domain: 'com' },
  douban: { enabled: true },
  lubimyczytac: { enabled: true },
  ranobedb: { enabled: true },
  google: { enabled: true, language: null, apiKey: null },
  openLibrary: { enabled: true },
  hardcover: { enabled: false, apiKey: null },
  comicvine: { enabled: false, apiKey: null },
};

export function testRuntime(site: FakeSite, overrides: Partial<ProviderRuntime> = {}): ProviderRuntime {
  return {
    http: createHttpClient({ allowPrivateHosts: ['127.0.0.1'] }),
    providerSettings: ALL_ON,
    baseUrls: Object.fromEntries(PROVIDER_IDS.map((id) => [id, site.url])),
    minIntervalMs: 0,
    timeoutMs: 3000,
    ...overrides,
  };
}

export function testContext(provider: MetadataProvider, site: FakeSite, overrides: Partial<ProviderRuntime> = {}): ProviderContext {
  return createProviderContext(provider, testRuntime(site, overrides));
}

/**
 * How far apart two departures 300 ms apart are at least seen to be: a loaded CI machine can deschedule the process
 * for tens of milliseconds between the limiter's go and the send, yet requests sent without spacing are a few ms apart.
 */
export const SPACED = 200;

/** The shared client, noting when each request leaves (the limiter's work), apart from when the site sees it. */
export function departureRecordingHttp(): { http: HttpClient; sentAt: number[] } {
  const inner = createHttpClient({ allowPrivateHosts: ['127.0.0.1'] });
  const sentAt: number[] = [];
  return { http: { ...inner, request: (req: OutgoingRequest) => (sentAt.push(Date.now()), inner.request(req)) }, sentAt };
}
