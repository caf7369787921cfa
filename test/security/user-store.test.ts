import assert from "node:assert/strict";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import { PlainServer } from "../../src/security/plain-server.js";
import { ScramServer } from "../../src/security/scram-server.js";
import { SECURITY_DIR } from "../../src/security/store-file.js";
import { USERS_FILE, UserStore } from "../../src/security/user-store.js";
import { FaultyFileOps, isCode, jsonBlockAfter, withTempDir } from "./helpers.js";
import { TestScramClient } from "./scram-client.js";

const plainLogin = (store: UserStore, user: string, password: string) =>
  new PlainServer(store).step(Buffer.from(`\0${user}\0${password}`)).then(
    () => true,
    () => false,
  );

const usersPath = (dir: string) => join(dir, SECURITY_DIR, USERS_FILE);

describe("UserStore", () => {
  test("adds users with both SCRAM credentials, keeps them across a reopen, and never stores the password", () =>
    withTempDir(async (dir) => {
      const store = await UserStore.open(dir);
      await store.add("alice", "correct horse battery");
      await store.add("bob", "another-password", { mechanisms: ["SCRAM-SHA-512"], iterations: 4096 });
      const again = await UserStore.open(dir);
      assert.deepEqual(again.list(), [
        {
          name: "alice",
          credentials: [
            { mechanism: "SCRAM-SHA-256", iterations: 8192 },
            { mechanism: "SCRAM-SHA-512", iterations: 8192 },
          ],
        },
        { name: "bob", credentials: [{ mechanism: "SCRAM-SHA-512", iterations: 4096 }] },
      ]);
      assert.ok(await plainLogin(again, "alice", "correct horse battery"));
      assert.ok(await plainLogin(again, "bob", "another-password"));
      const text = await readFile(usersPath(dir), "utf8");
      assert.ok(!text.includes("correct horse") && !text.includes("another-password"));
      assert.equal((await stat(usersPath(dir))).mode & 0o777, 0o600, "readable by the broker's user only");
    }));

  test("a SCRAM client logs in with the stored credential", () =>
    withTempDir(async (dir) => {
      const store = await UserStore.open(dir);
      await store.add("carol", "scram-password");
      const server = new ScramServer("SCRAM-SHA-512", store);
      const client = new TestScramClient("SCRAM-SHA-512", "carol", "scram-password");
      assert.ok(client.verifies(await server.step(client.final(await server.step(client.first())))));
    }));

  test("passwd replaces the credential: the old password stops working, the new one works", () =>
    withTempDir(async (dir) => {
      const store = await UserStore.open(dir);
      await store.add("alice", "old-password");
      await store.setPassword("alice", "new-password");
      const again = await UserStore.open(dir);
      assert.equal(await plainLogin(again, "alice", "old-password"), false);
      assert.ok(await plainLogin(again, "alice", "new-password"));
    }));

  test("add of an existing user, passwd or delete of a missing one: typed errors, nothing changed", () =>
    withTempDir(async (dir) => {
      const store = await UserStore.open(dir);
      await store.add("alice", "password-1");
      await assert.rejects(store.add("alice", "password-2"), isCode(ErrorCode.USER_ALREADY_EXISTS));
      await assert.rejects(store.setPassword("bob", "password-2"), isCode(ErrorCode.UNKNOWN_USER));
      await assert.rejects(store.delete("bob"), isCode(ErrorCode.UNKNOWN_USER));
      assert.ok(await plainLogin(store, "alice", "password-1"));
      await store.delete("alice");
      assert.deepEqual((await UserStore.open(dir)).list(), []);
    }));

  const badInput: [string, string, RegExp][] = [
    ["", "password-1", /must not be empty/],
    ["User:*", "password-1", /may contain only/],
    ["al ice", "password-1", /may contain only/],
    ["a".repeat(256), "password-1", /longer than 255/],
    ["ANONYMOUS", "password-1", /reserved/],
    ["alice", "short", /at least 8 bytes/],
    ["alice", "p".repeat(256), /at most 255 bytes/],
    ["alice", "pass\0word-1", /NUL/],
    ["alice", "password\ud800", /not valid Unicode/],
  ];
  for (const [name, password, reason] of badInput) {
    test(`refuses user ${JSON.stringify(name.slice(0, 12))} with password ${JSON.stringify(password.slice(0, 12))}: ${reason.source}`, () =>
      withTempDir(async (dir) => {
        const store = await UserStore.open(dir);
        await assert.rejects(
          store.add(name, password),
          (err: unknown) => isCode(ErrorCode.INVALID_REQUEST)(err) && reason.test((err as Error).message),
        );
        assert.deepEqual(store.list(), []);
      }));
  }

  for (const step of ["write-half", "rename", "sync-dir"] as const) {
    test(`a write that fails at ${step} changes neither memory nor (before the rename) the file`, () =>
      withTempDir(async (dir) => {
        const ops = new FaultyFileOps();
        const store = await UserStore.open(dir, { ops });
        await store.add("alice", "password-1");
        ops.failAt = step;
        await assert.rejects(store.add("bob", "password-2"), isCode(ErrorCode.STORAGE_ERROR));
        assert.deepEqual(
          store.list().map((u) => u.name),
          ["alice"],
        );
        const files = await readdir(join(dir, SECURITY_DIR));
        assert.deepEqual(files, [USERS_FILE], "no temporary file left behind");
        const reopened = (await UserStore.open(dir)).list().map((u) => u.name);
        // Only a failed directory fsync comes after the rename: the file may then hold either.
        if (step === "sync-dir") assert.ok(reopened.includes("alice"));
        else assert.deepEqual(reopened, ["alice"]);
        ops.failAt = null;
        // The next change writes what memory holds: a change reported failed never comes back.
        await store.add("carol", "password-3");
        assert.deepEqual(
          (await UserStore.open(dir)).list().map((u) => u.name),
          ["alice", "carol"],
        );
      }));
  }

  test("a half-written temporary file left by a crash is not read", () =>
    withTempDir(async (dir) => {
      const store = await UserStore.open(dir);
      await store.add("alice", "password-1");
      await writeFile(`${usersPath(dir)}.tmp`, '{"version": 1, "users": [{"na');
      assert.deepEqual(
        (await UserStore.open(dir)).list().map((u) => u.name),
        ["alice"],
      );
    }));

  test("changes made at once are all kept, in call order", () =>
    withTempDir(async (dir) => {
      const store = await UserStore.open(dir);
      const names = ["u1", "u2", "u3", "u4", "u5"];
      await Promise.all(names.map((n) => store.add(n, `password-${n}`, { mechanisms: ["SCRAM-SHA-256"] })));
      await Promise.all([
        store.delete("u2"),
        store.add("u2", "password-again", { mechanisms: ["SCRAM-SHA-256"] }),
      ]);
      const again = await UserStore.open(dir);
      assert.deepEqual(
        again.list().map((u) => u.name),
        names,
      );
      assert.ok(await plainLogin(again, "u2", "password-again"));
    }));

  const damaged: [string, string, RegExp][] = [
    ["not JSON", "{", /not JSON/],
    ["another version", '{"version": 2, "users": []}', /expected \{"version": 1/],
    ["a bad name", '{"version": 1, "users": [{"name": "a b", "credentials": [{}]}]}', /may contain only/],
    [
      "too few iterations",
      '{"version": 1, "users": [{"name": "a", "credentials": [{"mechanism": "SCRAM-SHA-256", "iterations": 1, "salt": "AAAAAAAAAAAAAAAAAAAAAA==", "storedKey": "", "serverKey": ""}]}]}',
      /iterations must be an integer from 4096/,
    ],
    [
      "no credentials",
      '{"version": 1, "users": [{"name": "a", "credentials": []}]}',
      /needs a name and credentials/,
    ],
  ];
  for (const [what, text, reason] of damaged) {
    test(`a users file with ${what} stops the open with STORAGE_ERROR rather than losing users`, () =>
      withTempDir(async (dir) => {
        await UserStore.open(dir);
        await writeFile(usersPath(dir), text);
        await assert.rejects(
          UserStore.open(dir),
          (err: unknown) =>
            isCode(ErrorCode.STORAGE_ERROR)(err) &&
            reason.test((err as Error).message) &&
            (err as Error).message.includes(usersPath(dir)),
        );
      }));
  }

  test("a users file over the size bound is refused before it is read", () =>
    withTempDir(async (dir) => {
      await UserStore.open(dir);
      await writeFile(usersPath(dir), Buffer.alloc(2048, 0x20));
      await assert.rejects(UserStore.open(dir, { maxBytes: 1024 }), /2048 bytes; the limit is 1024/);
    }));

  test("reads the users.json example of docs/security.md (alice, pencil-pencil)", () =>
    withTempDir(async (dir) => {
      const doc = await readFile(new URL("../../../docs/security.md", import.meta.url), "utf8");
      await UserStore.open(dir);
      await writeFile(usersPath(dir), jsonBlockAfter(doc, "users.json"));
      const store = await UserStore.open(dir);
      assert.ok(await plainLogin(store, "alice", "pencil-pencil"));
      assert.equal(await plainLogin(store, "alice", "pencil-pencil!"), false);
    }));
});
