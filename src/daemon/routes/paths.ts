// PathController: the folder picker used when adding library folders.
import Type from 'typebox';
import { FolderBrowseError, foldersAt } from '../../core/libraries/folder-browser.ts';
import { badRequest } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

export const pathRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/path',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { querystring: Type.Object({ path: Type.String() }) },
    handler: async (request) => {
      const { path } = request.query as { path: string };
      try {
        return await foldersAt(path);
      } catch (error) {
        if (error instanceof FolderBrowseError) throw badRequest(error.message);
        throw error;
      }
    },
  },
];
