/**
 * #/messages: the message browser. Pick a topic and a partition (or all of them), then start at an
 * offset or a time, or search for a key. A key search is a bounded scan on the broker (it says how
 * many records it examined); "Continue" scans on from where it stopped.
 */
import { api, type BrowseAnswer, errorText, type ShownBytes, type TopicSummary } from "../api.js";
import { fill, h, notice, table } from "../dom.js";
import * as fmt from "../format.js";
import { link, type View } from "../view.js";

type Mode = "offset" | "timestamp" | "key";
/** Partitions searched at once when "all" is picked. */
const MAX_PARALLEL = 8;

interface Row {
  partition: number;
  message: BrowseAnswer["messages"][number];
}

export const messagesView: View = (root, _live, { query }) => {
  const topic = h("select", { id: "browse-topic", name: "topic" });
  const partition = h("select", { id: "browse-partition", name: "partition" });
  const mode = h(
    "select",
    { id: "browse-mode", name: "mode" },
    h("option", { value: "offset" }, "from offset"),
    h("option", { value: "timestamp" }, "from time"),
    h("option", { value: "key" }, "with key"),
  );
  const offset = h("input", { id: "browse-offset", type: "number", min: 0, value: 0 });
  const when = h("input", { id: "browse-time", type: "datetime-local", step: 1 });
  const key = h("input", { id: "browse-key", placeholder: "key" });
  const limit = h(
    "select",
    { id: "browse-limit" },
    ...[20, 50, 100, 500].map((n) => h("option", { value: n }, n)),
  );
  const form = h(
    "form",
    { class: "inline", id: "browse" },
    h("label", {}, "Topic", topic),
    h("label", {}, "Partition", partition),
    h("label", {}, "Messages", mode),
    h("label", { id: "field-offset" }, "Offset", offset),
    h("label", { id: "field-time" }, "Time", when),
    h("label", { id: "field-key" }, "Key", key),
    h("label", {}, "Limit", limit),
    h("button", { type: "submit" }, "Show"),
  );
  const message = h("div");
  const results = h("div");
  const more = h("div");
  root.append(
    h("h1", {}, "Messages"),
    h("div", { class: "panel" }, form, message),
    h("div", { class: "panel" }, results, more),
  );

  let topics: TopicSummary[] = [];
  const showFields = () => {
    const m = mode.value as Mode;
    (form.querySelector("#field-offset") as HTMLElement).hidden = m !== "offset";
    (form.querySelector("#field-time") as HTMLElement).hidden = m !== "timestamp";
    (form.querySelector("#field-key") as HTMLElement).hidden = m !== "key";
  };
  const fillPartitions = (chosen: string | null) => {
    const t = topics.find((x) => x.name === topic.value);
    const options = [h("option", { value: "all" }, "all")];
    for (let p = 0; p < (t?.partitions ?? 0); p++) options.push(h("option", { value: p }, p));
    fill(partition, ...options);
    partition.value = chosen ?? (t?.partitions === 1 ? "0" : "all");
  };
  mode.addEventListener("change", showFields);
  topic.addEventListener("change", () => fillPartitions(null));

  const search = async (from: Map<number, number> | null) => {
    notice(message, "info", "");
    const t = topics.find((x) => x.name === topic.value);
    if (t === undefined) return notice(message, "error", "Pick a topic.");
    const m = mode.value as Mode;
    const base = new URLSearchParams({ limit: limit.value });
    if (m === "key") {
      if (key.value === "") return notice(message, "error", "Type a key to search for.");
      base.set("key", key.value);
    } else if (m === "timestamp" && from === null) {
      const ms = new Date(when.value).getTime();
      if (Number.isNaN(ms)) return notice(message, "error", "Pick a time.");
      base.set("timestamp", String(ms));
    } else if (from === null) {
      base.set("offset", String(Math.max(0, Number(offset.value) || 0)));
    }
    const partitions =
      partition.value === "all" ? [...Array(t.partitions).keys()] : [Number(partition.value)];
    const answers = new Map<number, BrowseAnswer>();
    try {
      for (let i = 0; i < partitions.length; i += MAX_PARALLEL) {
        await Promise.all(
          partitions.slice(i, i + MAX_PARALLEL).map(async (p) => {
            const q = new URLSearchParams(base);
            const start = from?.get(p);
            if (start !== undefined) {
              q.delete("timestamp");
              q.set("offset", String(start));
            }
            const path = `/api/v1/topics/${encodeURIComponent(t.name)}/partitions/${p}/messages?${q}`;
            answers.set(p, await api<BrowseAnswer>("GET", path));
          }),
        );
      }
    } catch (err) {
      return notice(message, "error", errorText(err));
    }
    show(answers, m);
  };

  const show = (answers: Map<number, BrowseAnswer>, m: Mode) => {
    const rows: Row[] = [];
    for (const [p, a] of answers) for (const msg of a.messages) rows.push({ partition: p, message: msg });
    if (answers.size > 1)
      rows.sort((a, b) => a.message.timestampMs - b.message.timestampMs || a.partition - b.partition);
    const next = new Map<number, number>();
    let examined = 0;
    let complete = true;
    for (const [p, a] of answers) {
      if (a.nextOffset < a.highWatermark) next.set(p, a.nextOffset);
      if (a.scan !== undefined) {
        examined += a.scan.examined;
        complete &&= a.scan.complete;
      }
    }
    fill(
      results,
      m === "key"
        ? h(
            "p",
            { class: "muted", id: "scan-note" },
            `${rows.length} found among ${fmt.exact(examined)} records examined`,
            complete
              ? " (to the end of the log)."
              : ` (at most ${fmt.exact(answers.values().next().value?.scan?.limit ?? 0)} per partition per search: continue for more).`,
          )
        : null,
      rows.length === 0
        ? h("p", { class: "muted" }, "No messages.")
        : table(
            ["partition", ["offset", "num"], "time", "key", "value"],
            rows.map((r) =>
              h(
                "tr",
                { "data-offset": `${r.partition}/${r.message.offset}` },
                h("td", {}, r.partition),
                h("td", { class: "num" }, r.message.offset),
                h("td", { class: "mono" }, fmt.time(r.message.timestampMs)),
                h("td", { class: "mono key" }, shown(r.message.key)),
                h("td", { class: "mono value" }, shown(r.message.value)),
              ),
            ),
          ),
    );
    fill(
      more,
      next.size === 0
        ? null
        : h(
            "button",
            { type: "button", id: "browse-more", onclick: () => void search(next) },
            m === "key" ? "Continue the search" : "Next page",
          ),
    );
  };

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = new URLSearchParams({ topic: topic.value, partition: partition.value });
    history.replaceState(null, "", `${link("messages")}?${q}`);
    void search(null);
  });

  showFields();
  api<{ topics: TopicSummary[] }>("GET", "/api/v1/topics").then(
    (answer) => {
      topics = answer.topics.filter((t) => !t.internal);
      fill(topic, ...topics.map((t) => h("option", { value: t.name }, t.name)));
      const wanted = query.get("topic");
      if (wanted !== null && topics.some((t) => t.name === wanted)) topic.value = wanted;
      fillPartitions(query.get("partition"));
      if (wanted !== null) void search(null);
    },
    (err: unknown) => notice(message, "error", errorText(err)),
  );
  return () => {};
};

function shown(b: ShownBytes | null): Node | string {
  if (b === null) return h("span", { class: "muted" }, "null");
  const text = b.encoding === "base64" ? `base64:${b.data}` : b.data;
  return b.truncated ? `${text}… (${fmt.bytes(b.size)})` : text;
}
