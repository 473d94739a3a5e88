// Every route of the API, in one list: the app and the OpenAPI document are built from it.
import type { RouteDef } from "../modules/common/route";
import { buildOpenApi } from "./openapi";
import { getAccount } from "../modules/account/routes";
import { getPricing, listErrors, listOperations, openApiRoute } from "../modules/reference/routes";
import { fileRoutes } from "../modules/files/routes";
import { jobRoutes } from "../modules/jobs/routes";
import { getUsage } from "../modules/usage/routes";
import { getDailyUsage } from "../modules/usage/daily";
import { webhookRoutes } from "../modules/webhooks/routes";

const base: RouteDef[] = [...fileRoutes, ...jobRoutes, getAccount, getUsage, listOperations, listErrors, getPricing];
base.push(...webhookRoutes);
base.push(getDailyUsage);

let document: object | null = null;
export const allRoutes: RouteDef[] = [...base, openApiRoute(() => (document ??= buildOpenApi(allRoutes)))];
