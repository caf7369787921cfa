// librdkafka 2.0.2 (kcat, confluent-kafka) sends its own nonce again before the combined nonce in
// its SCRAM client-final message; Kafka accepts that, and Conch refused it ("client-final nonce is
// not the one the server sent"), so no librdkafka client could log in with SCRAM.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { deriveScramCredential } from "../../src/security/scram-credential.js";
import { ScramServer } from "../../src/security/scram-server.js";
import { lookupOf, TestScramClient } from "../security/scram-client.js";

test("SCRAM accepts librdkafka's client-final nonce (its own nonce, then the combined one)", async () => {
  for (const mechanism of ["SCRAM-SHA-256", "SCRAM-SHA-512"] as const) {
    const users = lookupOf({ bob: [await deriveScramCredential(mechanism, "secret")] });
    const server = new ScramServer(mechanism, users);
    const client = new TestScramClient(mechanism, "bob", "secret");
    const serverFirst = await server.step(client.first());
    const serverFinal = await server.step(client.final(serverFirst, client.nonce));
    assert.ok(client.verifies(serverFinal));
    assert.equal(server.user, "bob");
  }
});

test("SCRAM still refuses a client-final nonce with any other prefix", async () => {
  const users = lookupOf({ bob: [await deriveScramCredential("SCRAM-SHA-256", "secret")] });
  const server = new ScramServer("SCRAM-SHA-256", users);
  const client = new TestScramClient("SCRAM-SHA-256", "bob", "secret");
  const serverFirst = await server.step(client.first());
  await assert.rejects(
    server.step(client.final(serverFirst, "x")),
    (err: unknown) => err instanceof ConchError && err.code === ErrorCode.AUTHENTICATION_FAILED,
  );
});
