import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ErrorCode } from "../../src/format/errors.js";
import type { AclRule } from "../../src/security/acl-rule.js";
import { ACLS_FILE, AclStore } from "../../src/security/acl-store.js";
import { SECURITY_DIR } from "../../src/security/store-file.js";
import { FaultyFileOps, isCode, jsonBlockAfter, withTempDir } from "./helpers.js";

const readOrders: AclRule = {
  principal: "User:alice",
  permission: "allow",
  operation: "read",
  resourceType: "topic",
  patternType: "literal",
  name: "orders",
};
const denyWrites: AclRule = {
  ...readOrders,
  permission: "deny",
  operation: "write",
  patternType: "prefixed",
  name: "ord",
};

describe("AclStore", () => {
  test("added rules take effect at once and survive a reopen; duplicates are kept once", () =>
    withTempDir(async (dir) => {
      const store = await AclStore.open(dir);
      assert.equal(store.authorizer.authorize("User:alice", "read", "topic", "orders"), false);
      assert.equal(await store.add([readOrders, { ...readOrders }]), 1);
      assert.equal(await store.add([readOrders, denyWrites]), 1);
      assert.equal(store.authorizer.authorize("User:alice", "read", "topic", "orders"), true);
      const again = await AclStore.open(dir, { superUsers: ["User:root"] });
      assert.deepEqual(again.list(), [readOrders, denyWrites]);
      assert.equal(again.authorizer.authorize("User:alice", "write", "topic", "orders"), false);
      assert.equal(again.authorizer.authorize("User:root", "write", "topic", "orders"), true);
      assert.deepEqual(again.list({ permission: "deny" }), [denyWrites]);
    }));

  test("remove takes the rules a filter matches, and the authorizer follows", () =>
    withTempDir(async (dir) => {
      const store = await AclStore.open(dir);
      await store.add([readOrders, denyWrites, { ...readOrders, principal: "User:bob" }]);
      assert.deepEqual(await store.remove({ principal: "User:alice" }), [readOrders, denyWrites]);
      assert.equal(store.authorizer.authorize("User:alice", "read", "topic", "orders"), false);
      assert.equal(store.authorizer.authorize("User:bob", "read", "topic", "orders"), true);
      assert.deepEqual((await AclStore.open(dir)).list(), [{ ...readOrders, principal: "User:bob" }]);
      assert.deepEqual(await store.remove({ principal: "User:nobody" }), []);
    }));

  test("a batch with one invalid rule adds none", () =>
    withTempDir(async (dir) => {
      const store = await AclStore.open(dir);
      await assert.rejects(
        store.add([readOrders, { ...readOrders, name: "../x" }]),
        (err: unknown) =>
          isCode(ErrorCode.INVALID_REQUEST)(err) && /Invalid ACL rule/.test((err as Error).message),
      );
      assert.deepEqual(store.list(), []);
      assert.deepEqual((await AclStore.open(dir)).list(), []);
    }));

  test("a failed write leaves the rules and the authorizer as they were", () =>
    withTempDir(async (dir) => {
      const ops = new FaultyFileOps();
      const store = await AclStore.open(dir, { ops });
      await store.add([readOrders]);
      ops.failAt = "rename";
      await assert.rejects(store.remove({}), isCode(ErrorCode.STORAGE_ERROR));
      assert.equal(store.authorizer.authorize("User:alice", "read", "topic", "orders"), true);
      assert.deepEqual((await AclStore.open(dir)).list(), [readOrders]);
    }));

  test("a damaged rules file stops the open with STORAGE_ERROR naming the rule", () =>
    withTempDir(async (dir) => {
      await AclStore.open(dir);
      const path = join(dir, SECURITY_DIR, ACLS_FILE);
      await writeFile(
        path,
        JSON.stringify({ version: 1, rules: [readOrders, { ...readOrders, permission: "perhaps" }] }),
      );
      await assert.rejects(
        AclStore.open(dir),
        (err: unknown) =>
          isCode(ErrorCode.STORAGE_ERROR)(err) && /rules\[1\]: permission/.test((err as Error).message),
      );
    }));

  test("reads the acls.json example of docs/security.md", () =>
    withTempDir(async (dir) => {
      const doc = await readFile(new URL("../../../docs/security.md", import.meta.url), "utf8");
      await AclStore.open(dir);
      await writeFile(join(dir, SECURITY_DIR, ACLS_FILE), jsonBlockAfter(doc, "acls.json"));
      const { authorizer } = await AclStore.open(dir);
      assert.equal(authorizer.authorize("User:alice", "write", "topic", "orders.eu"), true);
      assert.equal(authorizer.authorize("User:alice", "describe", "topic", "orders.eu"), true);
      assert.equal(authorizer.authorize("User:alice", "write", "topic", "orders.audit"), false);
      assert.equal(authorizer.authorize("User:CN=reporting,O=acme", "read", "group", "reports"), true);
    }));
});
