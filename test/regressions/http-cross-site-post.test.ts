/**
 * A web page on another site could change the broker through a visitor's browser: a form or
 * `fetch(..., { mode: "no-cors" })` POST with a text/plain body needs no CORS preflight, and the
 * admin API parsed any body as JSON, so `POST /api/v1/topics` created a topic (and reset-offsets
 * moved a group) from any page the console's user visited. A body must now be sent as
 * application/json, which a browser sends cross-site only after a preflight this port refuses.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startHttp } from "../http/helpers.js";

test("a POST with a text/plain or form body is refused and changes nothing", async (t) => {
  const { broker, base } = await startHttp(t);
  for (const type of [
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
  ]) {
    const res = await fetch(`${base}/api/v1/topics`, {
      method: "POST",
      headers: { "content-type": type, origin: "https://elsewhere.example" },
      body: JSON.stringify({ name: "planted", partitions: 1 }),
    });
    assert.equal(res.status, 400, type);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, "MALFORMED_REQUEST");
    assert.match(body.error.message, /content-type: application\/json/);
  }
  assert.deepEqual(broker.listTopics(), [], "no topic was created");
  const json = await fetch(`${base}/api/v1/topics`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify({ name: "wanted" }),
  });
  assert.equal(json.status, 201, "a JSON body is still taken");
});
