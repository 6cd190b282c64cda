// IconController: user SVG icons for shelves and libraries. Uploads are sanitized before they are stored
// (core/icons/svg-sanitize.ts); one icon is served as image/svg+xml under a Content-Security-Policy that lets it run
// and load nothing, so even a file put into the icon folder by hand cannot act when opened on its own.
import Type from 'typebox';
import { allIcons, deleteIcon, IconError, listIconNames, readIcon, saveIcon } from '../../core/icons/icon-store.ts';
import { SVG_LIMITS } from '../../core/icons/svg-sanitize.ts';
import { ApiError, badRequest } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const RULE = adminOr('canManageIcons');

/** Largest batch request body, in bytes. */
export const BATCH_BODY_LIMIT = 16 * 1024 * 1024;

/** SvgIconCreateRequest and its bean-validation constraints (schemas.md). */
const SvgIconCreateRequest = Type.Object({
  svgName: Type.String({ minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9-]+$' }),
  svgData: Type.String({ minLength: 1, maxLength: SVG_LIMITS.chars, pattern: '\\S' }),
});

const SvgIconBatchRequest = Type.Object({ icons: Type.Array(SvgIconCreateRequest, { minItems: 1 }) });

const NameParams = Type.Object({ svgName: Type.String({ minLength: 1, maxLength: 300 }) });

/** An icon on its own runs nothing and loads nothing (inline styles and embedded rasters are all it may use). */
const ICON_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

function asApiError(error: unknown): unknown {
  if (!(error instanceof IconError)) return error;
  if (error.code === 'EXISTS') return new ApiError(409, error.message);
  if (error.code === 'NOT_FOUND') return new ApiError(404, `File not found: ${error.message}`);
  return badRequest(error.message);
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asApiError(error);
  }
}

export const iconRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/icons',
    auth: 'jwt',
    rule: RULE,
    schema: { body: SvgIconCreateRequest },
    handler: async (request, reply, ctx) => {
      const { svgName, svgData } = request.body as { svgName: string; svgData: string };
      await mapped(() => saveIcon(ctx.config.dataDir, svgName, svgData));
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/icons/batch',
    auth: 'jwt',
    rule: RULE,
    // The whole batch is parsed in memory (the raw text and the parsed strings, about twice its size): the cap bounds
    // what one request can cost. Hundreds of ordinary icons fit; a larger set is sent in several batches.
    bodyLimit: BATCH_BODY_LIMIT,
    schema: { body: SvgIconBatchRequest },
    handler: async (request, _reply, ctx) => {
      const { icons } = request.body as { icons: { svgName: string; svgData: string }[] };
      const results: { iconName: string; success: boolean; errorMessage?: string }[] = [];
      for (const icon of icons) {
        try {
          await saveIcon(ctx.config.dataDir, icon.svgName, icon.svgData);
          results.push({ iconName: icon.svgName, success: true });
        } catch (error) {
          const mappedError = asApiError(error);
          if (!(mappedError instanceof ApiError)) throw error;
          results.push({ iconName: icon.svgName, success: false, errorMessage: mappedError.message });
        }
      }
      const successCount = results.filter((r) => r.success).length;
      return { totalRequested: icons.length, successCount, failureCount: icons.length - successCount, results };
    },
  },
  {
    method: 'GET',
    url: '/api/v1/icons/{svgName}/content',
    auth: 'jwt',
    schema: { params: NameParams },
    handler: async (request, reply, ctx) => {
      const { svgName } = request.params as { svgName: string };
      const svg = await mapped(() => readIcon(ctx.config.dataDir, svgName));
      return reply
        .type('image/svg+xml; charset=utf-8')
        .header('Content-Security-Policy', ICON_CSP)
        .header('X-Content-Type-Options', 'nosniff')
        .send(svg);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/icons',
    auth: 'jwt',
    schema: { querystring: Type.Object({ page: Type.Integer({ default: 0 }), size: Type.Integer({ default: 50 }) }) },
    handler: async (request, _reply, ctx) => {
      const { page, size } = request.query as { page: number; size: number };
      if (page < 0) throw badRequest('Page index must not be less than zero');
      if (size < 1) throw badRequest('Page size must not be less than one');
      return listIconNames(ctx.config.dataDir, page, size);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/icons/{svgName}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: NameParams },
    handler: async (request, reply, ctx) => {
      const { svgName } = request.params as { svgName: string };
      await mapped(() => deleteIcon(ctx.config.dataDir, svgName));
      return reply.status(200).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/icons/all/content',
    auth: 'jwt',
    handler: async (_request, reply, ctx) => reply.header('X-Content-Type-Options', 'nosniff').send(await allIcons(ctx.config.dataDir)),
  },
];
