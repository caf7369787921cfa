/** /api/v1/groups: list, describe (members, assignments, committed offsets, lag), reset offsets. */
import type { ResetTarget } from "../broker/group-coordinator.js";
import type { HttpContext } from "./http-context.js";
import { badRequest } from "./http-errors.js";
import { integerField, readJsonObject, stringField } from "./request-input.js";
import type { Route } from "./router.js";

export function groupRoutes(context: HttpContext): Route[] {
  return [
    {
      method: "GET",
      path: "/api/v1/groups",
      handler: () => ({ status: 200, body: { groups: context.requireBroker().groups.listGroups() } }),
    },
    {
      method: "GET",
      path: "/api/v1/groups/:group",
      handler: ({ params }) => ({
        status: 200,
        body: context.requireBroker().groups.describeGroup(params.group!),
      }),
    },
    {
      method: "POST",
      path: "/api/v1/groups/:group/reset-offsets",
      handler: async ({ req, params }) => {
        const body = await readJsonObject(req);
        const topic = stringField(body, "topic");
        const offsets = await context
          .requireBroker()
          .groups.resetOffsets(params.group!, topic, resetTarget(body));
        return { status: 200, body: { group: params.group, offsets } };
      },
    },
  ];
}

function resetTarget(body: Record<string, unknown>): ResetTarget {
  const to = stringField(body, "to");
  switch (to) {
    case "earliest":
    case "latest":
      return { to };
    case "offset":
      return { to, offset: integerField(body, "offset", 0, Number.MAX_SAFE_INTEGER) };
    case "timestamp":
      return { to, timestampMs: integerField(body, "timestampMs", 0, Number.MAX_SAFE_INTEGER) };
    default:
      throw badRequest(
        `"to" must be "earliest", "latest", "offset" or "timestamp", got ${JSON.stringify(to)}`,
      );
  }
}
