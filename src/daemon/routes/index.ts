// The route table: every group's routes, in one list the app registers and the permission test walks.
import type { RouteSpec } from '../route-spec.ts';
import { systemRoutes } from './system.ts';

export function allRoutes(): RouteSpec[] {
  return [...systemRoutes];
}
