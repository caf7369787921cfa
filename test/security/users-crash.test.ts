// A process killed at any moment leaves users.json whole, with every user whose add had resolved.
import assert from "node:assert/strict";
import { test } from "node:test";
import { UserStore } from "../../src/security/user-store.js";
import { runAndKill } from "../storage/kill-writer.js";
import { withTempDir } from "./helpers.js";

const writer = new URL("./users-writer.js", import.meta.url).pathname;

test("SIGKILL at random moments never damages the user store nor loses an acknowledged user", () =>
  withTempDir(async (dir) => {
    const acknowledged: string[] = [];
    for (let round = 0; round < 8; round++) {
      const { lines, stderr } = await runAndKill(
        writer,
        dir,
        20 + Math.floor(Math.random() * 150),
        round % 3 === 0,
      );
      assert.ok(!stderr.includes("Error"), stderr);
      acknowledged.push(...lines.filter((l) => l !== "ready"));
      const names = (await UserStore.open(dir)).list().map((u) => u.name);
      // Every acknowledged add is there; at most one more, the add in flight when the kill came.
      assert.deepEqual(names.slice(0, acknowledged.length), acknowledged);
      assert.ok(
        names.length <= acknowledged.length + 1,
        `${names.length} users, ${acknowledged.length} acknowledged`,
      );
      acknowledged.splice(0, acknowledged.length, ...names);
    }
    assert.ok(acknowledged.length > 0, "the writer got some adds done");
  }));
