/** #/topics: every topic with its partitions, messages, size, retention and rates; the create form. */
import { api, errorText, type TopicSummary } from "../api.js";
import { fill, h, notice, table } from "../dom.js";
import * as fmt from "../format.js";
import { onEachSnapshot } from "../live.js";
import { link, type View } from "../view.js";

const RETENTION_CHOICES: [string, string][] = [
  ["", "broker default"],
  ["3600000", "1 hour"],
  ["86400000", "1 day"],
  ["604800000", "7 days"],
  ["2592000000", "30 days"],
  ["-1", "forever"],
];

export const topicsView: View = (root, live) => {
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const message = h("div");
  const name = h("input", {
    name: "name",
    required: true,
    placeholder: "orders",
    pattern: "[A-Za-z0-9._\\-]+",
    id: "create-name",
  });
  const partitions = h("input", {
    name: "partitions",
    type: "number",
    min: 1,
    value: 1,
    id: "create-partitions",
  });
  const retention = h(
    "select",
    { name: "retention", id: "create-retention" },
    ...RETENTION_CHOICES.map(([v, label]) => h("option", { value: v }, label)),
  );
  const showInternal = h("input", { type: "checkbox" });
  const form = h(
    "form",
    { class: "inline", id: "create-topic" },
    h("label", {}, "Name", name),
    h("label", {}, "Partitions", partitions),
    h("label", {}, "Retention", retention),
    h("button", { type: "submit" }, "Create topic"),
  );
  let topics: TopicSummary[] = [];
  const draw = () => {
    const s = live.last;
    const rates = new Map(s?.topics.map((t) => [t.topic, t]) ?? []);
    const shown = topics.filter((t) => showInternal.checked || !t.internal);
    fill(
      list,
      shown.length === 0
        ? h("p", { class: "muted" }, "No topics yet.")
        : table(
            [
              "topic",
              ["partitions", "num"],
              ["messages", "num"],
              ["size", "num"],
              "retention",
              ["in", "num"],
              ["out", "num"],
            ],
            shown.map((t) =>
              h(
                "tr",
                { "data-topic": t.name },
                h("td", {}, h("a", { href: link("topics", t.name) }, t.name)),
                h("td", { class: "num" }, t.partitions),
                h("td", { class: "num messages" }, fmt.exact(t.messages)),
                h("td", { class: "num" }, fmt.bytes(t.sizeBytes)),
                h("td", {}, retentionText(t)),
                h("td", { class: "num" }, fmt.rate(rates.get(t.name)?.messagesInPerSec ?? 0)),
                h("td", { class: "num" }, fmt.rate(rates.get(t.name)?.messagesOutPerSec ?? 0)),
              ),
            ),
          ),
    );
  };
  const load = async () => {
    topics = (await api<{ topics: TopicSummary[] }>("GET", "/api/v1/topics")).topics;
    draw();
  };
  showInternal.addEventListener("change", draw);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const configs: Record<string, string> = {};
    if (retention.value !== "") configs["retention.ms"] = retention.value;
    const body = { name: name.value.trim(), partitions: Number(partitions.value), configs };
    api("POST", "/api/v1/topics", body).then(
      () => {
        notice(message, "info", `Topic ${body.name} created.`);
        form.reset();
        return load();
      },
      (err: unknown) => notice(message, "error", errorText(err)),
    );
  });
  root.append(
    h("h1", {}, "Topics"),
    h("div", { class: "panel" }, h("h2", {}, "New topic"), form, message),
    h(
      "div",
      { class: "panel" },
      h("label", { class: "muted" }, h("span", {}, showInternal, " show internal topics")),
      list,
    ),
  );
  return onEachSnapshot(live, load);
};

function retentionText(t: TopicSummary): string {
  const parts: string[] = [];
  if (t.cleanupPolicy.includes("delete")) {
    parts.push(fmt.duration(t.retentionMs));
    if (t.retentionBytes >= 0) parts.push(`${fmt.bytes(t.retentionBytes)} per partition`);
  }
  if (t.cleanupPolicy.includes("compact")) parts.push("compacted");
  return parts.join(", ");
}
