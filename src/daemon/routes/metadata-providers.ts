// MetadataController's provider-facing routes: prospective metadata for a book (a server-sent event per candidate),
// ISBN lookup, and one item's details from a provider.
import { Readable } from 'node:stream';
import Type from 'typebox';
import { queryFor, usableProviders } from '../../core/metadata/book-match.ts';
import { refreshOptionsFrom } from '../../core/metadata/merge.ts';
import { readCurrentMetadata } from '../../core/metadata/metadata-apply.ts';
import type { ProviderRuntime } from '../../core/metadata/provider-context.ts';
import { isProviderId, PROVIDER_IDS, type MetadataCandidate, type ProviderId, type ProviderQuery } from '../../core/metadata/provider.ts';
import { providerIds } from '../../core/metadata/providers/index.ts';
import { providerDetails, searchProviders, type ProviderOutcome } from '../../core/metadata/search.ts';
import { readSetting } from '../../core/settings/app-settings.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { badRequest } from '../http-errors.ts';
import { providerHttpError, providerRuntimeFor } from '../metadata-runtime.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const FetchMetadataRequest = Type.Object({
  bookId: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  providers: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  isbn: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  author: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  asin: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
type FetchMetadataBody = Partial<Record<'isbn' | 'title' | 'author' | 'asin', string | null>> & { providers?: string[] | null };

/** A candidate as BookMetadata on the wire: the item id stays inside (the UI uses the provider-specific ids). */
export function candidateJson(candidate: MetadataCandidate): Record<string, unknown> {
  const { providerItemId: _id, ...rest } = candidate;
  return rest;
}

function requestedProviders(raw: string[] | null | undefined): ProviderId[] | undefined {
  if (!raw || raw.length === 0) return undefined;
  const unknown = raw.filter((p) => !isProviderId(p));
  if (unknown.length > 0) throw badRequest(`Unknown metadata provider: ${unknown.join(', ')} (known: ${PROVIDER_IDS.join(', ')})`);
  return [...new Set(raw as ProviderId[])];
}

/** Grimmory's default chain: the title's providers in the default refresh options; else every usable provider. */
async function defaultChain(ctx: Parameters<RouteSpec['handler']>[2], runtime: ProviderRuntime): Promise<ProviderId[]> {
  const options = refreshOptionsFrom(await readSetting(ctx.store.db, 'QUICK_BOOK_MATCH'));
  const title = options.fieldOptions.title;
  const usable = usableProviders(runtime);
  const chain = title ? [title.p1, title.p2, title.p3, title.p4].filter((p): p is ProviderId => p !== null && usable(p)) : [];
  return chain.length > 0 ? [...new Set(chain)] : providerIds().filter(usable);
}

const text = (v: string | null | undefined): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Server-sent events, one `data:` line per candidate, as each provider answers. */
async function* candidateEvents(outcomes: Promise<ProviderOutcome[]>[]): AsyncGenerator<string> {
  const pending = new Map(outcomes.map((p, i) => [i, p.then((o) => ({ i, o }))]));
  while (pending.size > 0) {
    const { i, o } = await Promise.race(pending.values());
    pending.delete(i);
    for (const outcome of o) for (const candidate of outcome.candidates) yield `data:${JSON.stringify(candidateJson(candidate))}\n\n`;
  }
}

export const metadataProviderRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/metadata/prospective',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: Type.Object({ bookId: Type.Integer() }), body: Type.Union([FetchMetadataRequest, Type.Null()]) },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const body = (request.body ?? {}) as FetchMetadataBody;
      const runtime = await providerRuntimeFor(ctx);
      const providers = requestedProviders(body.providers) ?? (await defaultChain(ctx, runtime));
      const current = await readCurrentMetadata(ctx.store.db, bookId);
      const fromBook: ProviderQuery = current ? queryFor(current) : {};
      const given = text(body.isbn) ?? text(body.title);
      const query: ProviderQuery = given
        ? { ...(text(body.isbn) ? { isbn: text(body.isbn) } : {}), ...(text(body.title) ? { title: text(body.title) } : {}), ...(text(body.author) ? { author: text(body.author) } : {}), ...(text(body.asin) ? { asin: text(body.asin) } : {}), ...(fromBook.knownIds ? { knownIds: fromBook.knownIds } : {}) }
        : fromBook;
      const usable = usableProviders(runtime);
      // Each provider on its own: a failing one (logged) leaves the others' candidates coming.
      const outcomes = providers.filter(usable).map((p) =>
        searchProviders([p], { ...query, limit: 10 }, runtime).then((o) => {
          for (const failed of o.filter((x) => x.error)) request.log.warn({ provider: failed.provider, code: failed.error?.code }, failed.error?.message ?? 'provider failed');
          return o;
        }),
      );
      reply.header('cache-control', 'no-cache');
      return reply.type('text/event-stream').send(Readable.from(candidateEvents(outcomes), { objectMode: false }));
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/metadata/isbn-lookup',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { body: Type.Object({ isbn: Type.Optional(Type.Union([Type.String(), Type.Null()])) }) },
    handler: async (request, reply, ctx) => {
      const isbn = text((request.body as { isbn?: string | null }).isbn);
      if (!isbn) return reply.status(404).send();
      const runtime = await providerRuntimeFor(ctx);
      const errors: string[] = [];
      for (const provider of await defaultChain(ctx, runtime)) {
        const [outcome] = await searchProviders([provider], { isbn }, runtime);
        if (outcome?.error) errors.push(outcome.error.message);
        // Only a hit on the ISBN itself counts; a provider without ISBN search has nothing to say here.
        const hit = outcome?.searchedBy === 'isbn' ? outcome.candidates[0] : undefined;
        if (hit) return candidateJson(hit);
      }
      if (errors.length > 0) request.log.warn({ isbn, errors }, 'ISBN lookup: providers failed');
      return reply.status(404).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/metadata/detail/{provider}/{providerItemId}',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: Type.Object({ provider: Type.String(), providerItemId: Type.String({ minLength: 1 }) }) },
    handler: async (request, reply, ctx) => {
      const { provider, providerItemId } = request.params as { provider: string; providerItemId: string };
      if (!isProviderId(provider)) throw badRequest(`Unknown metadata provider: ${provider}`);
      const runtime = await providerRuntimeFor(ctx);
      const found = await providerDetails(provider, providerItemId, runtime).catch(providerHttpError);
      if (!found) return reply.status(404).send();
      return candidateJson(found);
    },
  },
];
