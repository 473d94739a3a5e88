// GET /account: who a request runs as — account, plan, the key in use and its effective limits.
import { Type as T } from "@sinclair/typebox";
import { route } from "../common/route";
import { limits, pagesPerJob, plans } from "../../domain/pricing";
import { config } from "../../config";

const Account = T.Object({
  object: T.Literal("account"),
  id: T.String({ format: "uuid" }),
  email: T.String(),
  email_verified: T.Boolean(),
  created_at: T.String({ format: "date-time" }),
  plan: T.Object({
    id: T.String(),
    name: T.String(),
    price_eur_per_month: T.Number(),
    included_credits_per_month: T.Integer(),
    live_access: T.Boolean(),
  }),
  spending_cap_eur: T.Union([T.Number(), T.Null()]),
  key: T.Object({
    id: T.String({ format: "uuid" }),
    mode: T.Union([T.Literal("live"), T.Literal("test")]),
    livemode: T.Boolean(),
    last4: T.String(),
    scopes: T.Array(T.String()),
    created_at: T.String({ format: "date-time" }),
    expires_at: T.Union([T.String({ format: "date-time" }), T.Null()]),
  }),
  limits: T.Object({
    requests_per_minute: T.Integer(),
    concurrent_jobs: T.Integer(),
    pages_per_job: T.Integer(),
    max_upload_bytes: T.Integer(),
    billed: T.Boolean(),
  }),
});

export const getAccount = route({
  method: "GET",
  path: "/account",
  operationId: "getAccount",
  summary: "The account, plan, key and limits this request runs under",
  tag: "Account",
  scope: "any",
  responses: { 200: { description: "The account.", schema: Account } },
  errors: [],
  handler: ({ auth }) => {
    const plan = plans[auth.account.plan];
    const l = limits[auth.mode];
    return {
      status: 200,
      body: {
        object: "account",
        id: auth.account.id,
        email: auth.account.email,
        email_verified: auth.account.emailVerified,
        created_at: auth.account.createdAt.toISOString(),
        plan: {
          id: auth.account.plan,
          name: plan.name,
          price_eur_per_month: plan.price_eur_per_month,
          included_credits_per_month: plan.included_credits_per_month,
          live_access: plan.live_access,
        },
        spending_cap_eur: auth.account.spendingCapEur,
        key: {
          id: auth.keyId,
          mode: auth.mode,
          livemode: auth.mode === "live",
          last4: auth.last4,
          scopes: auth.scopes,
          created_at: auth.createdAt.toISOString(),
          expires_at: auth.expiresAt ? auth.expiresAt.toISOString() : null,
        },
        limits: {
          ...l,
          pages_per_job: pagesPerJob(auth.mode, auth.account.pagesPerJob),
          max_upload_bytes: config.maxUploadBytes,
          billed: auth.mode === "live",
        },
      },
    };
  },
});
