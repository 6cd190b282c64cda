// How each page/API provider fails: refusals, throttling, outages and slowness become a ProviderError with a code
// and a message naming the provider; requests to one provider keep their spacing.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError, type MetadataProvider } from '../../src/core/metadata/provider.ts';
import { amazonProvider } from '../../src/core/metadata/providers/amazon.ts';
import { audibleProvider } from '../../src/core/metadata/providers/audible.ts';
import { doubanProvider } from '../../src/core/metadata/providers/douban.ts';
import { goodreadsProvider } from '../../src/core/metadata/providers/goodreads.ts';
import { providerById } from '../../src/core/metadata/providers/index.ts';
import { lubimyczytacProvider } from '../../src/core/metadata/providers/lubimyczytac.ts';
import { ranobedbProvider } from '../../src/core/metadata/providers/ranobedb.ts';
import { startFakeSite, type FakeAnswer, type FakeSite } from '../helpers/fake-site.ts';
import { departureRecordingHttp, SPACED, testContext } from '../helpers/provider-harness.ts';

const CASES: { provider: MetadataProvider; itemId: string; name: string }[] = [
  { provider: amazonProvider, itemId: '0547928227', name: 'Amazon' },
  { provider: goodreadsProvider, itemId: '5907', name: 'Goodreads' },
  { provider: audibleProvider, itemId: '1705047572', name: 'Audible' },
  { provider: doubanProvider, itemId: '4913064', name: 'Douban' },
  { provider: lubimyczytacProvider, itemId: '4804', name: 'Lubimyczytac' },
  { provider: ranobedbProvider, itemId: '812', name: 'RanobeDB' },
];

async function failure(promise: Promise<unknown> | undefined): Promise<ProviderError> {
  const error = await Promise.resolve(promise).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}

describe('page and API providers when the remote side fails', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(async () => site.close());
  beforeEach(() => site.reset());

  it('are all registered, each with its own spacing and timeout', () => {
    for (const { provider } of CASES) {
      expect(providerById(provider.id)).toBe(provider);
      expect(provider.minIntervalMs).toBeGreaterThanOrEqual(500);
      expect(provider.timeoutMs).toBeGreaterThanOrEqual(10_000);
    }
  });

  for (const { provider, itemId, name } of CASES) {
    describe(name, () => {
      it('403 → BLOCKED, 429 → RATE_LIMITED with the wait, 503 → UNAVAILABLE', async () => {
        let status = 403;
        site.on('GET', /.*/, (): FakeAnswer => ({ status, headers: status === 429 ? { 'retry-after': '120' } : {}, html: '<html><body>no</body></html>' }));
        const ctx = testContext(provider, site);
        const blocked = await failure(provider.details?.(itemId, ctx));
        expect(blocked.code).toBe('BLOCKED');
        expect(blocked.message).toMatch(new RegExp(`^${name}: refused access \\(HTTP 403\\)`));
        status = 429;
        const limited = await failure(provider.details?.(itemId, ctx));
        expect(limited.code).toBe('RATE_LIMITED');
        expect(limited.message).toContain('retry after 120 s');
        status = 503;
        expect((await failure(provider.details?.(itemId, ctx))).code).toBe('UNAVAILABLE');
      });

      it('gives up after its timeout with TIMEOUT', async () => {
        site.on('GET', /.*/, { delayMs: 1500, html: '<html></html>' });
        const started = Date.now();
        const error = await failure(provider.details?.(itemId, testContext(provider, site, { timeoutMs: 200 })));
        expect(error.code).toBe('TIMEOUT');
        expect(error.message).toBe(`${name}: did not answer within 200 ms`);
        expect(Date.now() - started).toBeLessThan(1400);
      });

      it('spaces its requests by its minimum interval', async () => {
        site.on('GET', /.*/, { status: 404, html: '<html><body>gone</body></html>' });
        // The spacing is the provider's own: when it sends, not when a busy machine's loopback delivers.
        const { http: recording, sentAt } = departureRecordingHttp();
        const ctx = testContext(provider, site, { minIntervalMs: 300, http: recording });
        await provider.details?.(itemId, ctx);
        await provider.details?.(itemId, ctx);
        await provider.details?.(itemId, ctx);
        expect(site.requests).toHaveLength(3);
        expect(sentAt).toHaveLength(3);
        for (let i = 1; i < sentAt.length; i++) expect((sentAt[i] ?? 0) - (sentAt[i - 1] ?? 0)).toBeGreaterThanOrEqual(SPACED);
      });
    });
  }
});
