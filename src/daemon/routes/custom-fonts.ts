// Fonts for the EPUB reader: upload (multipart), list, download and delete, each user their own.
import Type from 'typebox';
import { addFont, deleteFont, FONT_MEDIA_TYPES, FontError, fontFile, listFonts, MAX_FONT_BYTES, type CustomFont } from '../../core/fonts/custom-fonts.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError, badRequest, localDateTime } from '../http-errors.ts';
import { readFileUpload, type UploadLimit } from '../multipart-upload.ts';
import { sendRangedFile } from '../ranged-file.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const FONT_ERROR_STATUS = { INVALID: 400, LIMIT: 400, NOT_FOUND: 404 } as const;

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof FontError) throw new ApiError(FONT_ERROR_STATUS[error.code], error.message);
    throw error;
  }
}

const fontJson = (font: CustomFont): CustomFont => ({ ...font, uploadedAt: localDateTime(new Date(font.uploadedAt)) });
const FontParams = Type.Object({ fontId: Type.Integer() });
const RULE = adminOr('canManageFonts');

const FONT_LIMIT: UploadLimit = { bytes: MAX_FONT_BYTES, tooLarge: () => badRequest(`File size exceeds maximum limit of ${MAX_FONT_BYTES / 1024 / 1024}MB`) };

export const customFontRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/custom-fonts/upload',
    auth: 'jwt',
    rule: RULE,
    multipart: true,
    schema: { querystring: Type.Object({ fontName: Type.Optional(Type.String()) }) },
    handler: async (request, _reply, ctx) => {
      const userId = principalOf(request).userId;
      return mapped(async () => {
        const upload = await readFileUpload(request, FONT_LIMIT, async () => ctx.paths.tmp, ctx.store.liveness);
        const fontName = upload.fields.fontName ?? (request.query as { fontName?: string }).fontName;
        return fontJson(await addFont(ctx.store.db, ctx.config.dataDir, userId, { tempPath: upload.file.path, originalFileName: upload.fileName, ...(fontName === undefined ? {} : { fontName }) }));
      });
    },
  },
  {
    method: 'GET',
    url: '/api/v1/custom-fonts',
    auth: 'jwt',
    rule: RULE,
    handler: async (request, _reply, ctx) => (await listFonts(ctx.store.db, principalOf(request).userId)).map(fontJson),
  },
  {
    method: 'DELETE',
    url: '/api/v1/custom-fonts/{fontId}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: FontParams },
    handler: async (request, reply, ctx) => {
      await mapped(() => deleteFont(ctx.store.db, ctx.config.dataDir, principalOf(request).userId, (request.params as { fontId: number }).fontId));
      return reply.status(200).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/custom-fonts/{fontId}/file',
    auth: 'jwt-or-query',
    rule: RULE,
    schema: { params: FontParams, querystring: Type.Object({ token: Type.Optional(Type.String()) }) },
    handler: async (request, reply, ctx) => {
      const font = await mapped(() => fontFile(ctx.store.db, ctx.config.dataDir, principalOf(request).userId, (request.params as { fontId: number }).fontId));
      reply.header('Cache-Control', 'private, max-age=31536000, immutable');
      return sendRangedFile(request, reply, font.path, FONT_MEDIA_TYPES[font.format], font.fileName);
    },
  },
];
