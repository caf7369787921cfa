import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import fc from "fast-check";
import { ErrorCode } from "../../src/format/errors.js";
import { ApiKey } from "../../src/protocol/api.js";
import { responseErrorCode } from "../../src/protocol/frame.js";
import { encodeListTopicsRequest } from "../../src/protocol/list-topics.js";
import { encodeSaslAuthenticateRequest } from "../../src/protocol/sasl-authenticate.js";
import { encodeSaslHandshakeRequest } from "../../src/protocol/sasl-handshake.js";
import { TestClient } from "../server/helpers.js";
import { isCode } from "./helpers.js";
import { startSecureServer } from "./secure-server.js";

const users = { alice: "pencil-pencil" };

for (const mechanism of ["scram-sha-256", "scram-sha-512"] as const) {
  test(`${mechanism}: the SDK logs in with the right password and is refused with a wrong one`, async (t) => {
    const f = await startSecureServer(t, { authentication: "required" }, { users });
    const ok = f.client({ sasl: { mechanism, username: "alice", password: "pencil-pencil" } });
    await ok.admin().createTopic("t", { partitions: 1 });
    assert.deepEqual(await ok.admin().listTopics(), ["t"]);
    const wrong = f.client({ sasl: { mechanism, username: "alice", password: "pencil-pencil!" } });
    await assert.rejects(wrong.admin().listTopics(), isCode(ErrorCode.AUTHENTICATION_FAILED));
    const unknown = f.client({ sasl: { mechanism, username: "mallory", password: "pencil-pencil" } });
    await assert.rejects(unknown.admin().listTopics(), isCode(ErrorCode.AUTHENTICATION_FAILED));
  });
}

test("PLAIN logs in over TLS, is refused with a wrong password, and is not offered without TLS", async (t) => {
  const f = await startSecureServer(t, { authentication: "required" }, { users });
  const tls = { ca: readFileSync(f.caFile), servername: "localhost" };
  const ok = f.client({ tls, sasl: { mechanism: "plain", username: "alice", password: "pencil-pencil" } });
  assert.deepEqual(await ok.admin().listTopics(), []);
  const wrong = f.client({
    tls,
    sasl: { mechanism: "plain", username: "alice", password: "wrong-password" },
  });
  await assert.rejects(wrong.admin().listTopics(), isCode(ErrorCode.AUTHENTICATION_FAILED));
  const plainListener = f.client({
    sasl: { mechanism: "plain", username: "alice", password: "pencil-pencil" },
  });
  await assert.rejects(plainListener.admin().listTopics(), isCode(ErrorCode.UNSUPPORTED_SASL_MECHANISM));
});

test("with logins required, a connection that has not logged in can do nothing else", async (t) => {
  const f = await startSecureServer(t, { authentication: "required" }, { users });
  await assert.rejects(f.client({}).admin().listTopics(), isCode(ErrorCode.ILLEGAL_SASL_STATE));
  // Without the requirement the same client is served as User:ANONYMOUS.
  const open = await startSecureServer(t, {}, { users });
  assert.deepEqual(await open.client({}).admin().listTopics(), []);
});

test("repeated failed logins are slowed down", async (t) => {
  const f = await startSecureServer(t, { authentication: "required" }, { users });
  const attempt = async (): Promise<number> => {
    const started = performance.now();
    const c = f.client({
      sasl: { mechanism: "scram-sha-256", username: "alice", password: "not-her-password" },
    });
    await assert.rejects(c.admin().listTopics(), isCode(ErrorCode.AUTHENTICATION_FAILED));
    await c.close();
    return performance.now() - started;
  };
  // Three failures are free; the fourth is held 250 ms, the fifth 500 ms (limiter defaults).
  for (let i = 0; i < 3; i++) await attempt();
  const fourth = await attempt();
  const fifth = await attempt();
  assert.ok(fourth >= 240, `the fourth failure took ${fourth} ms`);
  assert.ok(fifth >= 490, `the fifth failure took ${fifth} ms`);
});

test("fuzzed SASL frames at the live listener are answered or closed, and the broker goes on", async (t) => {
  const f = await startSecureServer(
    t,
    { authentication: "required" },
    { users, limiter: { freeFailures: 1_000_000 } },
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN", "GSSAPI", ""),
      fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 3 }),
      async (mechanism, messages) => {
        const c = await TestClient.connect(f.port);
        try {
          await c.handshake();
          const hs = await c.call((id) => encodeSaslHandshakeRequest(id, { mechanism }));
          if (responseErrorCode(hs) !== ErrorCode.NONE) return;
          for (const m of messages) {
            const answer = await c.call((id) => encodeSaslAuthenticateRequest(id, m));
            const code = responseErrorCode(answer);
            if (code !== ErrorCode.NONE) {
              assert.ok(
                code === ErrorCode.AUTHENTICATION_FAILED || code === ErrorCode.ILLEGAL_SASL_STATE,
                `code ${code}`,
              );
              return;
            }
          }
        } finally {
          c.destroy();
        }
      },
    ),
    { numRuns: 60 },
  );
  // Still serving, and a raw frame of the wrong shape is answered too.
  const good = f.client({
    sasl: { mechanism: "scram-sha-256", username: "alice", password: "pencil-pencil" },
  });
  assert.deepEqual(await good.admin().listTopics(), []);
  const raw = await TestClient.connect(f.port);
  t.after(() => raw.destroy());
  await raw.handshake();
  const refused = await raw.call((id) => encodeListTopicsRequest(id));
  assert.equal(responseErrorCode(refused), ErrorCode.ILLEGAL_SASL_STATE);
  assert.equal(ApiKey.SASL_HANDSHAKE, 13);
});
