/**
 * /api/v1/groups: list (in cluster mode, every broker's: cluster-group-list.ts), describe (members,
 * assignments, committed offsets, lag), reset offsets.
 */
import type { ResetTarget } from "../broker/group-coordinator.js";
import type { GroupListing } from "../broker/group-description.js";
import { clusterGroups } from "./cluster-group-list.js";
import type { HttpContext } from "./http-context.js";
import { badRequest } from "./http-errors.js";
import { integerField, readJsonObject, stringField } from "./request-input.js";
import type { Route } from "./router.js";

export function groupRoutes(context: HttpContext): Route[] {
  return [
    {
      method: "GET",
      path: "/api/v1/groups",
      access: "login",
      handler: async ({ access }) => {
        const broker = context.requireBroker();
        // As the native ListGroups: only the groups the principal may describe.
        const visible = (g: GroupListing): boolean => access.allowed("describe", "group", g.group);
        if (broker.cluster === null)
          return { status: 200, body: { groups: broker.groups.listGroups().filter(visible) } };
        const { groups, brokersNotAnswering } = await clusterGroups(broker, broker.cluster);
        return { status: 200, body: { groups: groups.filter(visible), brokersNotAnswering } };
      },
    },
    {
      method: "GET",
      path: "/api/v1/groups/:group",
      access: { operation: "describe", type: "group", param: "group" },
      handler: async ({ params }) => ({
        status: 200,
        body: await context.requireBroker().groups.describeGroupRecovered(params.group!),
      }),
    },
    {
      method: "POST",
      path: "/api/v1/groups/:group/reset-offsets",
      access: { operation: "read", type: "group", param: "group" },
      handler: async ({ req, params, access }) => {
        const body = await readJsonObject(req);
        const topic = stringField(body, "topic");
        // Read on the group (the route) and on the topic, as the native ResetOffsets.
        access.check("read", "topic", topic);
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
