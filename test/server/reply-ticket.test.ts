import assert from "node:assert/strict";
import { test } from "node:test";
import type { Reply } from "../../src/server/handler.js";
import { ReplyTicket, type TicketOwner } from "../../src/server/reply-ticket.js";

class Owner implements TicketOwner {
  readonly events: string[] = [];
  answered(ticket: ReplyTicket, reply: Reply): void {
    this.events.push(`answered ${ticket.correlationId} ${reply === null ? "null" : String(reply)}`);
  }
  failed(ticket: ReplyTicket, err: unknown): void {
    this.events.push(`failed ${ticket.correlationId} ${(err as Error).message}`);
  }
}

test("a ticket answered after the connection took it goes to the owner at once, and only the first answer counts", () => {
  const owner = new Owner();
  const t = new ReplyTicket(owner, 7);
  t.register();
  assert.deepEqual(owner.events, []);
  t.reply(Buffer.from("x"));
  t.reply(Buffer.from("y"));
  t.fail(new Error("late"));
  assert.deepEqual(owner.events, ["answered 7 x"]);
});

test("an answer or failure that comes before the connection takes the ticket is delivered when it does", () => {
  const owner = new Owner();
  const answered = new ReplyTicket(owner, 1);
  answered.reply(null);
  const failed = new ReplyTicket(owner, 2);
  failed.fail(new Error("refused"));
  failed.reply(Buffer.from("ignored"));
  assert.deepEqual(owner.events, [], "nothing before register");
  answered.register();
  failed.register();
  assert.deepEqual(owner.events, ["answered 1 null", "failed 2 refused"]);
});
