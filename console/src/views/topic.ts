/** #/topics/<name>: a topic's live message rate, its partitions with offsets, its configs; delete. */
import { api, errorText, type PartitionRow, type TopicDetail } from "../api.js";
import { LineChart, legend } from "../chart.js";
import { fill, h, notice, table } from "../dom.js";
import * as fmt from "../format.js";
import { HISTORY, onEachSnapshot } from "../live.js";
import { link, type View } from "../view.js";

const IN = { label: "messages in/s", color: "#2563eb" };
const OUT = { label: "messages out/s", color: "#16a34a" };

export const topicView: View = (root, live, { path }) => {
  const name = path[0]!;
  const message = h("div");
  const chart = new LineChart(HISTORY, fmt.count);
  const partitions = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const configs = h("div");
  const total = h("span", { id: "topic-messages" });
  const remove = h("button", { class: "danger", type: "button", id: "delete-topic" }, "Delete topic");
  remove.addEventListener("click", () => {
    if (!confirm(`Delete topic ${name} and all its messages?`)) return;
    api("DELETE", `/api/v1/topics/${encodeURIComponent(name)}`).then(
      () => {
        location.hash = link("topics");
      },
      (err: unknown) => notice(message, "error", errorText(err)),
    );
  });
  root.append(
    h("h1", {}, h("a", { href: link("topics") }, "Topics"), " / ", name),
    message,
    h("div", { class: "panel" }, h("h2", {}, "Message rate"), chart.element, legend([IN, OUT])),
    h("div", { class: "panel" }, h("h2", {}, "Partitions · ", total, " messages"), partitions),
    h("div", { class: "panel" }, h("h2", {}, "Configuration"), configs),
    remove,
  );
  const load = async () => {
    let topic: TopicDetail;
    try {
      topic = await api<TopicDetail>("GET", `/api/v1/topics/${encodeURIComponent(name)}`);
    } catch (err) {
      notice(message, "error", errorText(err));
      return;
    }
    const history = live.topic(name);
    chart.draw([
      { ...IN, values: history.messagesIn },
      { ...OUT, values: history.messagesOut },
    ]);
    total.textContent = fmt.exact(
      topic.partitions.reduce<number | null>((n, p) => (n === null ? null : plus(n, stored(p))), 0),
    );
    const placed = topic.partitions.some((p) => p.leader !== undefined);
    fill(
      partitions,
      table(
        [
          "partition",
          ...(placed ? ["leader", "replicas", "ISR"] : []),
          ["log start", "num"],
          ["high watermark", "num"],
          ["messages", "num"],
          ["size", "num"],
          ["segments", "num"],
          "damaged ranges",
          "",
        ],
        topic.partitions.map((p) =>
          h(
            "tr",
            { "data-partition": p.partition },
            h("td", {}, p.partition),
            ...(placed
              ? [
                  h("td", {}, p.leader === undefined || p.leader < 0 ? "none" : p.leader),
                  h("td", {}, (p.replicas ?? []).join(",")),
                  h("td", {}, (p.isr ?? []).join(",")),
                ]
              : []),
            h("td", { class: "num" }, fmt.exact(p.logStartOffset)),
            h("td", { class: "num" }, fmt.exact(p.highWatermark)),
            h("td", { class: "num" }, fmt.exact(stored(p))),
            h("td", { class: "num" }, fmt.bytes(p.sizeBytes)),
            h("td", { class: "num" }, p.segments ?? fmt.UNKNOWN),
            h(
              "td",
              {},
              p.quarantined === null
                ? fmt.UNKNOWN
                : p.quarantined.length === 0
                  ? ""
                  : String(p.quarantined.length),
            ),
            h(
              "td",
              {},
              h(
                "a",
                { href: `${link("messages")}?topic=${encodeURIComponent(name)}&partition=${p.partition}` },
                "browse",
              ),
            ),
          ),
        ),
      ),
    );
    fill(
      configs,
      table(
        ["key", "value"],
        Object.entries(topic.configs).map(([k, v]) =>
          h("tr", {}, h("td", { class: "mono" }, k), h("td", { class: "mono" }, v)),
        ),
      ),
    );
  };
  return onEachSnapshot(live, load);
};

/** Messages a partition holds; null when its figures are not known here. */
function stored(p: PartitionRow): number | null {
  return p.highWatermark === null || p.logStartOffset === null ? null : p.highWatermark - p.logStartOffset;
}

function plus(n: number, m: number | null): number | null {
  return m === null ? null : n + m;
}
