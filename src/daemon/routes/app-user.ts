// The mobile app's view of the caller: what it may offer them.
import { appUserInfo } from '../../core/app/user-info.ts';
import { principalOf } from '../authenticate.ts';
import type { RouteSpec } from '../route-spec.ts';

export const appUserRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/app/users/me',
    auth: 'jwt',
    handler: (request, _reply, ctx) => appUserInfo(ctx.store, principalOf(request)),
  },
];
