import type { ApiRoute } from '../http/route.ts';
import type { RouteDeps } from './deps.ts';

/** A set of routes and what they run in the background, stopped with the API. */
export interface RouteGroup {
  routes: ApiRoute[];
  close?: () => Promise<void>;
}

export type RouteGroupFactory = (deps: RouteDeps) => RouteGroup;
