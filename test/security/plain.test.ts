import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { MAX_PLAIN_MESSAGE_BYTES, PlainServer, parsePlain } from "../../src/security/plain-server.js";
import { createSaslServer, offeredMechanisms } from "../../src/security/sasl-mechanisms.js";
import { deriveScramCredential } from "../../src/security/scram-credential.js";
import { ScramServer } from "../../src/security/scram-server.js";
import { lookupOf } from "./scram-client.js";

const isCode = (code: number) => (err: unknown) => err instanceof ConchError && err.code === code;
const plain = (...fields: (string | Buffer)[]) =>
  Buffer.concat(fields.flatMap((f, i) => (i ? [Buffer.from([0]), Buffer.from(f)] : [Buffer.from(f)])));

describe("parsePlain", () => {
  test("reads user and password, with or without an authorization identity equal to the user", () => {
    assert.deepEqual(parsePlain(plain("", "alice", "s3cret pässword")), {
      user: "alice",
      password: "s3cret pässword",
    });
    assert.deepEqual(parsePlain(plain("alice", "alice", "pw")), { user: "alice", password: "pw" });
  });

  const bad: [string, Buffer, RegExp][] = [
    ["one NUL", Buffer.from("alice\0pw"), /exactly two NUL/],
    ["three NULs", plain("", "alice", "pw", "x"), /exactly two NUL/],
    ["no NUL", Buffer.from("alice"), /exactly two NUL/],
    ["an empty user", plain("", "", "pw"), /empty user/],
    ["an empty password", plain("", "alice", ""), /empty password/],
    ["another user's authorization identity", plain("admin", "alice", "pw"), /authorization identity/],
    ["a field over 255 bytes", plain("", "alice", "p".repeat(256)), /over 255 bytes/],
    ["bytes that are not UTF-8", plain("", "alice", Buffer.from([0xc3, 0x28])), /not UTF-8/],
    ["too many bytes", Buffer.alloc(MAX_PLAIN_MESSAGE_BYTES + 1, 0x61), /limit is 767/],
  ];
  for (const [what, message, reason] of bad) {
    test(`refuses a message with ${what}`, () => {
      assert.throws(
        () => parsePlain(message),
        (err: unknown) => isCode(ErrorCode.AUTHENTICATION_FAILED)(err) && reason.test((err as Error).message),
      );
    });
  }
});

describe("PlainServer", () => {
  test("accepts the password of either SCRAM credential, refuses a wrong one or an unknown user alike", async () => {
    const users = lookupOf({
      a256: [await deriveScramCredential("SCRAM-SHA-256", "password-256")],
      a512: [await deriveScramCredential("SCRAM-SHA-512", "password-512")],
    });
    for (const [user, password] of [
      ["a256", "password-256"],
      ["a512", "password-512"],
    ]) {
      const server = new PlainServer(users);
      assert.equal((await server.step(plain("", user!, password!))).length, 0);
      assert.equal(server.complete, true);
      assert.equal(server.user, user);
    }
    const messages: string[] = [];
    for (const [user, password, failure] of [
      ["a256", "password-512", /wrong password "a256"/],
      ["nobody", "password-256", /unknown user "nobody"/],
    ] as const) {
      const server = new PlainServer(users);
      await assert.rejects(server.step(plain("", user, password)), (err: unknown) => {
        messages.push((err as Error).message);
        return isCode(ErrorCode.AUTHENTICATION_FAILED)(err);
      });
      assert.equal(server.complete, false);
      assert.equal(server.claimedUser, user);
      assert.match(server.failure ?? "", failure);
    }
    assert.equal(messages[0], messages[1]);
  });

  test("takes one message: a second is ILLEGAL_SASL_STATE", async () => {
    const server = new PlainServer(lookupOf({}));
    await assert.rejects(server.step(Buffer.from("x")), isCode(ErrorCode.AUTHENTICATION_FAILED));
    await assert.rejects(server.step(plain("", "a", "b")), isCode(ErrorCode.ILLEGAL_SASL_STATE));
  });
});

describe("SASL mechanisms", () => {
  test("PLAIN is offered on TLS listeners, and without TLS only when allowed", () => {
    assert.deepEqual(offeredMechanisms({}, true), ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]);
    assert.deepEqual(offeredMechanisms({}, false), ["SCRAM-SHA-256", "SCRAM-SHA-512"]);
    assert.deepEqual(offeredMechanisms({ allowPlainWithoutTls: true }, false), [
      "PLAIN",
      "SCRAM-SHA-256",
      "SCRAM-SHA-512",
    ]);
    assert.deepEqual(offeredMechanisms({ mechanisms: ["SCRAM-SHA-512"] }, true), ["SCRAM-SHA-512"]);
  });

  test("createSaslServer makes the server asked for, or says what is offered", () => {
    const users = lookupOf({});
    assert.ok(createSaslServer("PLAIN", users, {}, true) instanceof PlainServer);
    assert.ok(createSaslServer("SCRAM-SHA-512", users, {}, false) instanceof ScramServer);
    assert.throws(
      () => createSaslServer("PLAIN", users, {}, false),
      (err: unknown) =>
        isCode(ErrorCode.UNSUPPORTED_SASL_MECHANISM)(err) &&
        /not offered without TLS; offered: SCRAM-SHA-256, SCRAM-SHA-512/.test((err as Error).message),
    );
    assert.throws(
      () => createSaslServer("GSSAPI", users, {}, true),
      isCode(ErrorCode.UNSUPPORTED_SASL_MECHANISM),
    );
  });
});
