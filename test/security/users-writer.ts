/**
 * Child process of users-crash.test.ts: adds users to the store in `argv[2]` one after another,
 * printing each name once its add has resolved, until it is killed.
 */
import { UserStore } from "../../src/security/user-store.js";

const store = await UserStore.open(process.argv[2]!);
let next = store.list().length;
process.stdout.write("ready\n");
for (;;) {
  const name = `user-${String(next).padStart(5, "0")}`;
  await store.add(name, `password-${next}`, { mechanisms: ["SCRAM-SHA-256"], iterations: 4096 });
  process.stdout.write(`${name}\n`);
  next++;
}
