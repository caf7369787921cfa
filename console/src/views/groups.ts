/**
 * #/groups: consumer groups with their state, members and total lag (from the live feed), and
 * #/groups/<name>: lag per partition, red while it grows and green while it falls.
 */
import { api, errorText, type GroupDetail } from "../api.js";
import { fill, h, notice, table } from "../dom.js";
import * as fmt from "../format.js";
import { onEachSnapshot } from "../live.js";
import { link, type View } from "../view.js";

export const groupsView: View = (root, live) => {
  const list = h("div", {}, h("p", { class: "muted" }, "Waiting for the live feed…"));
  const previous = new Map<string, number>();
  root.append(h("h1", {}, "Consumer groups"), h("div", { class: "panel" }, list));
  return live.subscribe((s) => {
    fill(
      list,
      s.groups.length === 0
        ? h("p", { class: "muted" }, "No consumer groups yet.")
        : table(
            ["group", "state", ["members", "num"], ["lag", "num"]],
            s.groups.map((g) => {
              const row = h(
                "tr",
                { "data-group": g.group },
                h("td", {}, h("a", { href: link("groups", g.group) }, g.group)),
                h("td", {}, h("span", { class: `badge ${g.state}` }, g.state)),
                h("td", { class: "num" }, g.members),
                h("td", { class: `num lag ${trend(previous.get(g.group), g.lag)}` }, fmt.exact(g.lag)),
              );
              previous.set(g.group, g.lag);
              return row;
            }),
          ),
    );
  });
};

export const groupView: View = (root, live, { path }) => {
  const name = path[0]!;
  const message = h("div");
  const summary = h("p", { class: "muted" });
  const partitions = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const members = h("div");
  const previous = new Map<string, number>();
  root.append(
    h("h1", {}, h("a", { href: link("groups") }, "Groups"), " / ", name),
    message,
    summary,
    h("div", { class: "panel" }, h("h2", {}, "Lag per partition"), partitions),
    h("div", { class: "panel" }, h("h2", {}, "Members"), members),
  );
  const load = async () => {
    let g: GroupDetail;
    try {
      g = await api<GroupDetail>("GET", `/api/v1/groups/${encodeURIComponent(name)}`);
    } catch (err) {
      notice(message, "error", errorText(err));
      return;
    }
    notice(message, "info", "");
    const totalLag = g.partitions.reduce((n, p) => n + Math.max(0, p.lag), 0);
    fill(
      summary,
      h("span", { class: `badge ${g.state}` }, g.state),
      ` generation ${g.generation} · total lag `,
      h("strong", { id: "group-lag" }, fmt.exact(totalLag)),
    );
    fill(
      partitions,
      table(
        [
          "topic",
          ["partition", "num"],
          "owner",
          ["committed", "num"],
          ["high watermark", "num"],
          ["lag", "num"],
        ],
        g.partitions.map((p) => {
          const key = `${p.topic}/${p.partition}`;
          const lag = p.lag < 0 ? "no commit" : fmt.exact(p.lag);
          const row = h(
            "tr",
            { "data-partition": key },
            h("td", {}, h("a", { href: link("topics", p.topic) }, p.topic)),
            h("td", { class: "num" }, p.partition),
            h("td", { class: "mono" }, p.owner === "" ? "–" : p.owner),
            h("td", { class: "num" }, p.committed < 0 ? "–" : fmt.exact(p.committed)),
            h("td", { class: "num" }, fmt.exact(p.highWatermark)),
            h("td", { class: `num lag ${trend(previous.get(key), p.lag)}` }, lag),
          );
          previous.set(key, p.lag);
          return row;
        }),
      ),
    );
    fill(
      members,
      g.members.length === 0
        ? h("p", { class: "muted" }, "No members: the group is empty.")
        : table(
            ["member", "client"],
            g.members.map((m) =>
              h("tr", {}, h("td", { class: "mono" }, m.memberId), h("td", {}, m.clientId ?? "")),
            ),
          ),
    );
  };
  return onEachSnapshot(live, load);
};

/** "growing" when the lag rose since the last look, "shrinking" when it fell. */
function trend(before: number | undefined, now: number): string {
  if (before === undefined || before < 0 || now < 0 || before === now) return "";
  return now > before ? "growing" : "shrinking";
}
