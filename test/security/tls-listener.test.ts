import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { ApiKey } from "../../src/protocol/api.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerEntry } from "../../src/server/handler.js";
import { makeCa, makeCert } from "./certificates.js";
import { isCode } from "./helpers.js";
import { certFile, startSecureServer } from "./secure-server.js";

const read = (path: string) => readFileSync(path);

test("the SDK works over the TLS listener with a trusted certificate", async (t) => {
  const f = await startSecureServer(t);
  const client = f.client({ tls: { ca: read(f.caFile), servername: "localhost" } });
  await client.admin().createTopic("secure", { partitions: 1 });
  assert.deepEqual(await client.admin().listTopics(), ["secure"]);
});

test("the SDK refuses a broker certificate it does not trust, and says TLS_FAILED", async (t) => {
  const f = await startSecureServer(t);
  // No CA: the system's CAs do not know the test CA.
  const untrusted = f.client({ tls: { servername: "localhost" } });
  await assert.rejects(untrusted.admin().listTopics(), isCode(ErrorCode.TLS_FAILED));
  // Another CA altogether.
  const other = makeCa(f.dir, "other", "/CN=other-ca");
  const wrongCa = f.client({ tls: { ca: read(other), servername: "localhost" } });
  await assert.rejects(wrongCa.admin().listTopics(), isCode(ErrorCode.TLS_FAILED));
  // The plain listener still serves beside it.
  assert.deepEqual(await f.client({}).admin().listTopics(), []);
});

test("insecureSkipVerify accepts an untrusted certificate (testing only)", async (t) => {
  const f = await startSecureServer(t);
  const client = f.client({ tls: { insecureSkipVerify: true } });
  assert.deepEqual(await client.admin().listTopics(), []);
});

/** A ListTopics that answers with the connection's principal in its error message. */
function principalEcho(): ReturnType<typeof defaultHandlers> {
  const table = [...defaultHandlers()];
  const entry: HandlerEntry = {
    version: 1,
    handle: (ctx) => {
      throw new ConchError(ErrorCode.INVALID_REQUEST, `principal ${ctx.auth?.principal}`);
    },
  };
  table[ApiKey.LIST_TOPICS] = entry;
  return table;
}

test("mTLS: a verified client certificate is the connection's principal and counts as a login", async (t) => {
  const f = await startSecureServer(
    t,
    { tlsClientAuth: "required", authentication: "required" },
    { server: { handlers: principalEcho() } },
  );
  const alice = f.client({
    tls: {
      ca: read(f.caFile),
      servername: "localhost",
      cert: read(certFile(f, "alice")),
      key: read(certFile(f, "alice", "key")),
    },
  });
  await assert.rejects(alice.admin().listTopics(), (err) => {
    assert.ok(err instanceof ConchError);
    assert.equal(err.message, "principal User:CN=alice,O=acme,C=US");
    return true;
  });
  // Without a certificate the TLS handshake itself fails.
  const anonymous = f.client({ tls: { ca: read(f.caFile), servername: "localhost" } });
  await assert.rejects(anonymous.admin().listTopics(), (err) => err instanceof ConchError);
  // On the plain listener, with logins required, nothing but logging in is allowed.
  await assert.rejects(f.client({}).admin().describeTopic("x"), isCode(ErrorCode.ILLEGAL_SASL_STATE));
});

test("a reload serves the new certificate to new connections and keeps the open ones", async (t) => {
  const f = await startSecureServer(t);
  const before = f.client({ tls: { ca: read(f.caFile), servername: "localhost" } });
  await before.admin().createTopic("kept", { partitions: 1 });
  // A new CA and a new broker certificate written over the configured files.
  const dir = `${f.dir}/certs`;
  makeCa(dir, "ca2", "/CN=conch-test-ca-2");
  const next = makeCert(dir, "next", "/CN=localhost", { ca: "ca2" });
  const { copyFileSync } = await import("node:fs");
  copyFileSync(next.cert, certFile(f, "server"));
  copyFileSync(next.key, certFile(f, "server", "key"));
  await f.server.reloadSecurity();
  // The open connection goes on.
  assert.deepEqual(await before.admin().listTopics(), ["kept"]);
  // New connections get the new certificate: the old CA no longer verifies it, the new one does.
  const oldCa = f.client({ tls: { ca: read(f.caFile), servername: "localhost" } });
  await assert.rejects(oldCa.admin().listTopics(), isCode(ErrorCode.TLS_FAILED));
  const newCa = f.client({ tls: { ca: read(certFile(f, "ca2")), servername: "localhost" } });
  assert.deepEqual(await newCa.admin().listTopics(), ["kept"]);
});

test("a reload with a broken key file keeps the old certificate", async (t) => {
  const f = await startSecureServer(t);
  const { writeFileSync } = await import("node:fs");
  writeFileSync(certFile(f, "server", "key"), "not a key");
  await f.server.reloadSecurity();
  const client = f.client({ tls: { ca: read(f.caFile), servername: "localhost" } });
  assert.deepEqual(await client.admin().listTopics(), []);
});
