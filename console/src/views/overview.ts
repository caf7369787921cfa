/** #/: throughput in and out of the whole broker, live, and the busiest topics. */
import { api } from "../api.js";
import { LineChart, legend } from "../chart.js";
import { fill, h, table } from "../dom.js";
import * as fmt from "../format.js";
import { HISTORY } from "../live.js";
import { link, type View } from "../view.js";

const IN = { label: "messages in/s", color: "#2563eb" };
const OUT = { label: "messages out/s", color: "#16a34a" };

interface BrokerInfo {
  version: string;
  uptimeSeconds: number;
  dataDir: string;
  listeners: Record<string, { connections: number }>;
}

export const overviewView: View = (root, live) => {
  const values = {
    in: h("div", { class: "value", id: "rate-in" }, "–"),
    out: h("div", { class: "value", id: "rate-out" }, "–"),
    bytesIn: h("div", { class: "value" }, "–"),
    bytesOut: h("div", { class: "value" }, "–"),
    topics: h("div", { class: "value" }, "–"),
    lag: h("div", { class: "value" }, "–"),
  };
  const card = (label: string, value: HTMLElement) =>
    h("div", { class: "card" }, h("div", { class: "label" }, label), value);
  const chart = new LineChart(HISTORY, fmt.count);
  const busiest = h("div");
  const info = h("p", { class: "muted" });
  root.append(
    h("h1", {}, "Overview"),
    h(
      "div",
      { class: "cards" },
      card("Messages in", values.in),
      card("Messages out", values.out),
      card("Bytes in", values.bytesIn),
      card("Bytes out", values.bytesOut),
      card("Topics", values.topics),
      card("Consumer lag", values.lag),
    ),
    h("div", { class: "panel" }, h("h2", {}, "Throughput"), chart.element, legend([IN, OUT])),
    h("div", { class: "panel" }, h("h2", {}, "Busiest topics"), busiest),
    info,
  );
  api<BrokerInfo>("GET", "/api/v1/broker").then(
    (b) =>
      fill(
        info,
        `conch ${b.version} · up ${fmt.duration(b.uptimeSeconds * 1000)} · data in ${b.dataDir} · ${b.listeners.conch?.connections ?? 0} client connections`,
      ),
    () => {},
  );
  return live.subscribe((s) => {
    const t = live.total;
    const last = (a: number[]) => a[a.length - 1] ?? 0;
    values.in.textContent = fmt.rate(last(t.messagesIn));
    values.out.textContent = fmt.rate(last(t.messagesOut));
    values.bytesIn.textContent = `${fmt.bytes(last(t.bytesIn))}/s`;
    values.bytesOut.textContent = `${fmt.bytes(last(t.bytesOut))}/s`;
    values.topics.textContent = fmt.exact(s.topics.filter((x) => !x.topic.startsWith("__")).length);
    values.lag.textContent = fmt.count(s.groups.reduce((sum, g) => sum + g.lag, 0));
    chart.draw([
      { ...IN, values: t.messagesIn },
      { ...OUT, values: t.messagesOut },
    ]);
    const top = [...s.topics]
      .sort((a, b) => b.messagesInPerSec + b.messagesOutPerSec - (a.messagesInPerSec + a.messagesOutPerSec))
      .slice(0, 8);
    fill(
      busiest,
      top.length === 0
        ? h("p", { class: "muted" }, "No topics yet: create one on the Topics page.")
        : table(
            ["topic", ["in", "num"], ["out", "num"], ["bytes in", "num"], ["bytes out", "num"]],
            top.map((x) =>
              h(
                "tr",
                {},
                h("td", {}, h("a", { href: link("topics", x.topic) }, x.topic)),
                h("td", { class: "num" }, fmt.rate(x.messagesInPerSec)),
                h("td", { class: "num" }, fmt.rate(x.messagesOutPerSec)),
                h("td", { class: "num" }, `${fmt.bytes(x.bytesInPerSec)}/s`),
                h("td", { class: "num" }, `${fmt.bytes(x.bytesOutPerSec)}/s`),
              ),
            ),
          ),
    );
  });
};
