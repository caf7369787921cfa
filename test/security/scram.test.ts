import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { deriveScramCredential, type ScramMechanism } from "../../src/security/scram-credential.js";
import { MAX_SCRAM_MESSAGE_BYTES } from "../../src/security/scram-messages.js";
import { ScramServer } from "../../src/security/scram-server.js";
import { lookupOf, TestScramClient } from "./scram-client.js";

const isCode = (code: number) => (err: unknown) => err instanceof ConchError && err.code === code;

// RFC 7677 section 3: user "user", password "pencil".
const rfc7677 = {
  salt: Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64"),
  clientFirst: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
  serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
  serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
  clientFinal:
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
  serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
};

async function rfcServer(): Promise<ScramServer> {
  const credential = await deriveScramCredential("SCRAM-SHA-256", "pencil", {
    salt: rfc7677.salt,
    iterations: 4096,
  });
  return new ScramServer("SCRAM-SHA-256", lookupOf({ user: [credential] }), {
    serverNonce: () => rfc7677.serverNonce,
  });
}

describe("ScramServer", () => {
  test("answers RFC 7677's SCRAM-SHA-256 exchange byte for byte", async () => {
    const server = await rfcServer();
    assert.equal((await server.step(Buffer.from(rfc7677.clientFirst))).toString(), rfc7677.serverFirst);
    assert.equal(server.complete, false);
    assert.equal((await server.step(Buffer.from(rfc7677.clientFinal))).toString(), rfc7677.serverFinal);
    assert.equal(server.complete, true);
    assert.equal(server.user, "user");
  });

  test("refuses RFC 7677's exchange with one proof bit flipped", async () => {
    const server = await rfcServer();
    await server.step(Buffer.from(rfc7677.clientFirst));
    const bad = rfc7677.clientFinal.replace("p=d", "p=e");
    await assert.rejects(server.step(Buffer.from(bad)), isCode(ErrorCode.AUTHENTICATION_FAILED));
    assert.equal(server.complete, false);
    assert.equal(server.user, null);
    assert.match(server.failure ?? "", /bad user name or password for user "user"/);
  });

  for (const mechanism of ["SCRAM-SHA-256", "SCRAM-SHA-512"] as ScramMechanism[]) {
    test(`${mechanism}: a client with the password logs in and verifies the server`, async () => {
      const users = lookupOf({ "al,i=ce": [await deriveScramCredential(mechanism, "correct horse")] });
      const server = new ScramServer(mechanism, users);
      const client = new TestScramClient(mechanism, "al,i=ce", "correct horse");
      const final = await server.step(client.final(await server.step(client.first())));
      assert.ok(client.verifies(final));
      assert.equal(server.user, "al,i=ce");
    });

    test(`${mechanism}: a wrong password and an unknown user fail alike`, async () => {
      const users = lookupOf({ alice: [await deriveScramCredential(mechanism, "correct horse")] });
      const messages: string[] = [];
      for (const [user, password] of [
        ["alice", "wrong horse"],
        ["mallory", "correct horse"],
      ]) {
        const server = new ScramServer(mechanism, users);
        const client = new TestScramClient(mechanism, user!, password!);
        const serverFirst = await server.step(client.first());
        assert.match(serverFirst.toString(), /^r=[^,]+,s=[A-Za-z0-9+/=]+,i=\d+$/);
        await assert.rejects(server.step(client.final(serverFirst)), (err: unknown) => {
          assert.ok(isCode(ErrorCode.AUTHENTICATION_FAILED)(err));
          messages.push((err as Error).message);
          return true;
        });
        assert.equal(server.claimedUser, user);
      }
      assert.equal(messages[0], messages[1], "the client cannot tell the two apart");
    });

    test(`${mechanism}: kafkajs's SCRAM client logs in`, async () => {
      const require = createRequire(import.meta.url);
      const { SCRAM, DIGESTS } = require("kafkajs/src/broker/saslAuthenticator/scram.js");
      const users = lookupOf({ bob: [await deriveScramCredential(mechanism, "hunter2hunter2")] });
      const server = new ScramServer(mechanism, users);
      const saslAuthenticate = async ({ request, response }: KafkajsExchange) => {
        const encoded: Buffer = await request.encode();
        const reply = await server.step(encoded.subarray(4)); // kafkajs prefixes an int32 size
        return response.parse(reply);
      };
      const logger = { debug() {}, error() {} };
      const digest = mechanism === "SCRAM-SHA-256" ? DIGESTS.SHA256 : DIGESTS.SHA512;
      const client = new SCRAM(
        { username: "bob", password: "hunter2hunter2" },
        "h",
        1,
        logger,
        saslAuthenticate,
        digest,
      );
      await client.authenticate();
      assert.equal(server.user, "bob");

      const again = new ScramServer(mechanism, users);
      const failing = async ({ request, response }: KafkajsExchange) =>
        response.parse(await again.step((await request.encode()).subarray(4)));
      await assert.rejects(
        new SCRAM({ username: "bob", password: "nope-nope" }, "h", 1, logger, failing, digest).authenticate(),
      );
      assert.equal(again.complete, false);
    });
  }

  test("an unknown user gets the same salt each time, and a different one from another name", async () => {
    const users = lookupOf({});
    const saltOf = async (user: string) => {
      const reply = await new ScramServer("SCRAM-SHA-256", users).step(
        new TestScramClient("SCRAM-SHA-256", user, "x").first(),
      );
      return /,s=([^,]+),/.exec(reply.toString())?.[1];
    };
    assert.equal(await saltOf("ghost"), await saltOf("ghost"));
    assert.notEqual(await saltOf("ghost"), await saltOf("spirit"));
  });

  test("a step after success or failure is ILLEGAL_SASL_STATE", async () => {
    const server = await rfcServer();
    await server.step(Buffer.from(rfc7677.clientFirst));
    await server.step(Buffer.from(rfc7677.clientFinal));
    await assert.rejects(server.step(Buffer.from(rfc7677.clientFinal)), isCode(ErrorCode.ILLEGAL_SASL_STATE));

    const failed = await rfcServer();
    await assert.rejects(
      failed.step(Buffer.from("y,,n=user,r=abc")),
      isCode(ErrorCode.AUTHENTICATION_FAILED),
    );
    await assert.rejects(failed.step(Buffer.from(rfc7677.clientFirst)), isCode(ErrorCode.ILLEGAL_SASL_STATE));
  });

  const badFirst: [string, string | Buffer, RegExp][] = [
    ["channel binding wanted", "y,,n=user,r=abc", /channel binding/],
    ["channel binding used", "p=tls-unique,,n=user,r=abc", /channel binding/],
    ["an authorization identity", "n,a=admin,n=user,r=abc", /authorization identity/],
    ["no gs2 header", "n=user,r=abc", /must start with n,,/],
    ["a mandatory extension", "n,,m=ext,n=user,r=abc", /mandatory/],
    ["no user", "n,,r=abc", /lacks its n=/],
    ["an empty user", "n,,n=,r=abc", /empty user/],
    ["a bad escape", "n,,n=us=2Ger,r=abc", /=2C or =3D/],
    ["no nonce", "n,,n=user", /lacks its r=/],
    ["an empty nonce", "n,,n=user,r=", /bad nonce/],
    ["a nonce with a space", "n,,n=user,r=a b", /bad nonce/],
    ["a bad extension", "n,,n=user,r=abc,=x", /bad attribute/],
    ["a NUL", "n,,n=us\0er,r=abc", /NUL/],
    [
      "bytes that are not UTF-8",
      Buffer.from([0x6e, 0x2c, 0x2c, 0x6e, 0x3d, 0xff, 0x2c, 0x72, 0x3d, 0x61]),
      /UTF-8/,
    ],
    ["nothing", "", /empty/],
    ["too many bytes", `n,,n=user,r=${"a".repeat(MAX_SCRAM_MESSAGE_BYTES)}`, /limit is 2048/],
    ["a user name too long", `n,,n=${"u".repeat(256)},r=abc`, /longer than 255/],
  ];
  for (const [what, message, reason] of badFirst) {
    test(`a client-first message with ${what} fails with a reason`, async () => {
      const server = await rfcServer();
      await assert.rejects(server.step(Buffer.from(message)), (err: unknown) => {
        assert.ok(isCode(ErrorCode.AUTHENTICATION_FAILED)(err));
        assert.match((err as Error).message, reason);
        return true;
      });
    });
  }

  const nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
  const proof = "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
  const badFinal: [string, string, RegExp][] = [
    ["channel binding data", `c=eSws,r=${nonce},${proof}`, /biws/],
    ["another nonce", `c=biws,r=${nonce}x,${proof}`, /not the one/],
    ["no proof", `c=biws,r=${nonce}`, /lacks its p=/],
    ["a short proof", `c=biws,r=${nonce},p=AAAA`, /expected 32/],
    ["a proof that is not base64", `c=biws,r=${nonce},p=${"!".repeat(44)}`, /not base64/],
    ["a stray attribute", `c=biws,r=${nonce},x,${proof}`, /bad attribute/],
  ];
  for (const [what, message, reason] of badFinal) {
    test(`a client-final message with ${what} fails with a reason`, async () => {
      const server = await rfcServer();
      await server.step(Buffer.from(rfc7677.clientFirst));
      await assert.rejects(server.step(Buffer.from(message)), (err: unknown) => {
        assert.ok(isCode(ErrorCode.AUTHENTICATION_FAILED)(err));
        assert.match((err as Error).message, reason);
        return true;
      });
    });
  }

  test("accepts and ignores optional extensions (Kafka's tokenauth)", async () => {
    const server = await rfcServer();
    const reply = await server.step(Buffer.from(`${rfc7677.clientFirst},tokenauth=true`));
    assert.match(reply.toString(), /^r=rOprNGfwEbeRWgbNEkqO/);
  });

  test("any bytes as either message end in AUTHENTICATION_FAILED or success, nothing else", async () => {
    const credential = await deriveScramCredential("SCRAM-SHA-256", "pencil-pencil", { iterations: 4096 });
    const users = lookupOf({ user: [credential] });
    const text = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc
        .array(fc.constantFrom("n", ",", "=", "r", "c", "p", "biws", "user", "a", "2C", "\0", "y", "m"), {
          maxLength: 30,
        })
        .map((parts) => Buffer.from(parts.join(""))),
    );
    await fc.assert(
      fc.asyncProperty(text, text, async (first, final) => {
        const server = new ScramServer("SCRAM-SHA-256", users);
        try {
          await server.step(first);
          await server.step(final);
        } catch (err) {
          assert.ok(isCode(ErrorCode.AUTHENTICATION_FAILED)(err), String(err));
          assert.equal(server.complete, false);
        }
      }),
      { numRuns: 500 },
    );
  });
});

interface KafkajsExchange {
  request: { encode(): Promise<Buffer> };
  response: { parse(data: Buffer): Promise<unknown> };
}
