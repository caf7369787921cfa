/**
 * The web console in a real browser (Debian's chromium through playwright-core) against a real
 * `conch broker` process: it loads with nothing from elsewhere, shows a topic the SDK created, its
 * message count rises while a producer runs, a group's lag shows and falls to zero as a consumer
 * catches up, and the message browser finds a message by key. With CONCH_SCREENSHOTS=<dir>, each
 * page is also saved there as a PNG (how docs/console-*.png are made).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { eventually, launchChromium, useLiveBroker } from "./helpers.js";

const live = useLiveBroker();
let browser: Browser | null = null;
let skipped = "";
let page: Page;
const requested: string[] = [];
const pageErrors: string[] = [];

before(async () => {
  const launched = await launchChromium();
  if (typeof launched === "string") {
    skipped = launched;
    return;
  }
  browser = launched;
  page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
  page.on("request", (r) => requested.push(r.url()));
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => {
    // Chromium logs every HTTP error answer as "Failed to load resource": those are the API's
    // answers (a 409 the form shows, a 404 for a topic just deleted), not faults of the page.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) pageErrors.push(m.text());
  });
});

after(async () => {
  await browser?.close();
});

const SCREENSHOTS = process.env.CONCH_SCREENSHOTS ?? "";

/** With CONCH_SCREENSHOTS, saves the page; `settleMs` lets a live chart gather some history first. */
async function screenshot(name: string, settleMs = 0): Promise<void> {
  if (SCREENSHOTS === "") return;
  if (settleMs > 0) await page.waitForTimeout(settleMs);
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`) });
}

/** The number in an element's text ("1,234" -> 1234), or NaN. */
async function numberIn(selector: string): Promise<number> {
  const text = await page.locator(selector).first().textContent({ timeout: 10_000 });
  return Number((text ?? "").replace(/[^0-9-]/g, ""));
}

test("the console loads from the broker alone and shows a topic created by the SDK", async (t) => {
  if (skipped !== "") return t.skip(skipped);
  const { client, base } = live();
  await client.admin().createTopic("orders", { partitions: 3, configs: { "retention.ms": "86400000" } });
  await page.goto(`${base}/#/topics`);
  const row = page.locator('tr[data-topic="orders"]');
  await row.waitFor({ timeout: 10_000 });
  assert.deepEqual((await row.locator("td").allTextContents()).slice(0, 5), [
    "orders",
    "3",
    "0",
    "0 B",
    "1 d",
  ]);
  await page.locator("#live.on").waitFor({ timeout: 10_000 });
  const origin = new URL(base).origin;
  const elsewhere = requested.filter((u) => new URL(u).origin !== origin);
  assert.deepEqual(elsewhere, [], "every asset comes from the broker (no CDN)");
  assert.deepEqual(pageErrors, []);
});

test("the overview and a topic's message count rise while a producer runs", async (t) => {
  if (skipped !== "") return t.skip(skipped);
  const { client, base } = live();
  const producer = client.producer();
  let running = true;
  let sent = 0;
  const producing = (async () => {
    while (running) {
      const sends = [];
      for (let i = 0; i < 200; i++)
        sends.push(producer.send("orders", { key: `k${sent + i}`, value: `order ${sent + i}` }));
      await Promise.all(sends);
      sent += 200;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    await page.goto(`${base}/#/topics/orders`);
    await eventually("the topic page to count messages", async () => (await numberIn("#topic-messages")) > 0);
    const first = await numberIn("#topic-messages");
    await eventually(
      "the count to rise while the producer runs",
      async () => (await numberIn("#topic-messages")) > first,
    );
    // The rate chart draws a line once the feed has sent rates (its second snapshot on).
    await page.locator("svg.chart path").first().waitFor({ timeout: 10_000 });
    await screenshot("topic", 8000);
    await page.goto(`${base}/#/`);
    await eventually("the overview to show messages coming in", async () => (await numberIn("#rate-in")) > 0);
    await screenshot("overview", 8000);
  } finally {
    running = false;
    await producing;
    await producer.close();
  }
  await page.goto(`${base}/#/topics`);
  await eventually(
    "the topics list to show every message sent",
    async () => (await numberIn('tr[data-topic="orders"] .messages')) === sent,
  );
  await screenshot("topics");
  assert.deepEqual(pageErrors, []);
});

test("a group's lag shows, then falls to zero as its consumer catches up", async (t) => {
  if (skipped !== "") return t.skip(skipped);
  const { client, base } = live();
  await client.admin().createTopic("billing", { partitions: 2 });
  const producer = client.producer();
  const sends = [];
  for (let i = 0; i < 1000; i++)
    sends.push(producer.send("billing", { key: `c${i % 10}`, value: `invoice ${i}` }));
  await Promise.all(sends);
  await producer.close();
  // The group starts with offsets at the beginning: all 1000 messages are its lag. (A group exists
  // once it has committed; a reset never creates one.)
  await client.groups().commitOffsets("invoicing", [
    { topic: "billing", partition: 0, offset: 0 },
    { topic: "billing", partition: 1, offset: 0 },
  ]);
  const reset = await fetch(`${base}/api/v1/groups/invoicing/reset-offsets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ topic: "billing", to: "earliest" }),
  });
  assert.equal(reset.status, 200);

  await page.goto(`${base}/#/groups/invoicing`);
  await eventually("the lag of 1000", async () => (await numberIn("#group-lag")) === 1000);
  // More messages and no consumer yet: the lag grows, and the page marks it.
  const more = client.producer();
  await Promise.all(
    Array.from({ length: 100 }, (_, i) => more.send("billing", { value: `late ${i}`, partition: 0 })),
  );
  await more.close();
  await page.locator('tr[data-partition="billing/0"] td.lag.growing').waitFor({ timeout: 10_000 });
  await eventually("the lag of 1100", async () => (await numberIn("#group-lag")) === 1100);
  await screenshot("group");

  const consumer = client.consumer({ group: "invoicing", topics: ["billing"], autoCommitIntervalMs: 100 });
  let read = 0;
  try {
    for await (const m of consumer) {
      if (++read < 1100) continue;
      // The message in hand when the loop ends counts once committed; the rest go by autoCommit.
      await consumer.commit(m);
      break;
    }
    await eventually("the lag to fall to zero", async () => (await numberIn("#group-lag")) === 0);
    const rows = page.locator('tr[data-partition^="billing/"] td.lag');
    assert.equal(await rows.count(), 2);
    for (const text of await rows.allTextContents()) assert.equal(text, "0");
    await page.goto(`${base}/#/groups`);
    await page.locator('tr[data-group="invoicing"]').waitFor({ timeout: 10_000 });
    await screenshot("groups");
  } finally {
    await consumer.close();
  }
  assert.deepEqual(pageErrors, []);
});

test("the message browser finds a message by key", async (t) => {
  if (skipped !== "") return t.skip(skipped);
  const { base } = live();
  await page.goto(`${base}/#/messages`);
  await page.locator('#browse-topic option[value="orders"]').waitFor({ state: "attached", timeout: 10_000 });
  await page.selectOption("#browse-topic", "orders");
  await page.selectOption("#browse-partition", "all");
  await page.selectOption("#browse-mode", "key");
  await page.fill("#browse-key", "k42");
  await page.click('#browse button[type="submit"]');
  const found = page.locator("tr[data-offset]");
  await page.locator("#scan-note").waitFor({ timeout: 10_000 });
  assert.equal(await found.count(), 1);
  assert.equal(await found.locator("td.key").textContent(), "k42");
  assert.equal(await found.locator("td.value").textContent(), "order 42");
  assert.match(
    (await page.locator("#scan-note").textContent()) ?? "",
    /1 found among [\d,]+ records examined \(to the end of the log\)/,
  );
  await screenshot("messages");
  assert.deepEqual(pageErrors, []);
});

test("topics are created and deleted with the console's forms, and bad input is told", async (t) => {
  if (skipped !== "") return t.skip(skipped);
  const { base } = live();
  await page.goto(`${base}/#/topics`);
  await page.fill("#create-name", "from-form");
  await page.fill("#create-partitions", "4");
  await page.selectOption("#create-retention", "3600000");
  await page.click('#create-topic button[type="submit"]');
  const row = page.locator('tr[data-topic="from-form"]');
  await row.waitFor({ timeout: 10_000 });
  assert.deepEqual((await row.locator("td").allTextContents()).slice(0, 5), [
    "from-form",
    "4",
    "0",
    "0 B",
    "1 h",
  ]);
  const described = (await (await fetch(`${base}/api/v1/topics/from-form`)).json()) as {
    configs: Record<string, string>;
  };
  assert.equal(described.configs["retention.ms"], "3600000");

  // The same name again: the broker's error is shown, nothing else changes.
  await page.fill("#create-name", "from-form");
  await page.click('#create-topic button[type="submit"]');
  await page.locator(".message.error", { hasText: "TOPIC_ALREADY_EXISTS" }).waitFor({ timeout: 10_000 });

  await page.goto(`${base}/#/topics/from-form`);
  page.once("dialog", (d) => void d.accept());
  await page.click("#delete-topic");
  await page.waitForURL(/#\/topics$/, { timeout: 10_000 });
  await eventually(
    "the topic to be gone",
    async () => (await fetch(`${base}/api/v1/topics/from-form`)).status === 404,
  );
  await page.locator('tr[data-topic="orders"]').waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('tr[data-topic="from-form"]').count(), 0);
  assert.deepEqual(pageErrors, []);
});

test("the message browser pages from an offset", async (t) => {
  if (skipped !== "") return t.skip(skipped);
  const { base } = live();
  await page.goto(`${base}/#/messages?topic=billing&partition=1`);
  await page.locator("tr[data-offset]").first().waitFor({ timeout: 10_000 });
  await page.selectOption("#browse-mode", "offset");
  await page.fill("#browse-offset", "10");
  await page.selectOption("#browse-limit", "20");
  await page.click('#browse button[type="submit"]');
  // Not a wait for row 1/10 to exist: the first page (from offset 0) holds it too.
  await eventually(
    "the page from offset 10",
    async () => (await page.locator("tr[data-offset]").first().getAttribute("data-offset")) === "1/10",
  );
  const first = await page
    .locator("tr[data-offset]")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-offset")));
  assert.deepEqual(
    first,
    Array.from({ length: 20 }, (_, i) => `1/${10 + i}`),
  );
  await page.click("#browse-more");
  await page.locator('tr[data-offset="1/30"]').waitFor({ timeout: 10_000 });
  assert.equal(await page.locator("tr[data-offset]").count(), 20);
});
