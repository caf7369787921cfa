/**
 * Kafka answers the requests of a connection in the order they came, whatever order they complete
 * in (a fetch waiting for data holds back the answer to a metadata request behind it): clients
 * match responses to requests by position as much as by correlation id. Each request in flight
 * takes a slot at the tail; a completed slot is written once every slot before it is, and a slot
 * completed with no response (a produce with acks = 0) is passed over silently, in its turn.
 */

import type { KafkaResponse } from "./kafka-handler.js";

/** The transport calls a slot's answer goes through (FramedConnection.finish). */
export interface OrderedWriter {
  finish(cost: number, reply: KafkaResponse | null): void;
}

export class ResponseSlot {
  cost = 0;
  done = false;
  reply: KafkaResponse | null = null;
}

export class ResponseQueue {
  #slots: ResponseSlot[] = [];
  #head = 0;
  #writer: OrderedWriter;

  constructor(writer: OrderedWriter) {
    this.#writer = writer;
  }

  /** Slots not yet written. */
  get length(): number {
    return this.#slots.length - this.#head;
  }

  /** A slot at the tail for a request begun at `cost`. */
  push(cost: number): ResponseSlot {
    const slot = new ResponseSlot();
    slot.cost = cost;
    this.#slots.push(slot);
    return slot;
  }

  /** `slot`'s answer is ready (null: none is sent); writes every slot now at the head. */
  complete(slot: ResponseSlot, reply: KafkaResponse | null): void {
    if (slot.done) return;
    slot.done = true;
    slot.reply = reply;
    const slots = this.#slots;
    while (this.#head < slots.length && slots[this.#head]!.done) {
      const head = slots[this.#head]!;
      slots[this.#head++] = DONE;
      this.#writer.finish(head.cost, head.reply);
    }
    if (this.#head === slots.length) {
      slots.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= slots.length) {
      this.#slots = slots.slice(this.#head);
      this.#head = 0;
    }
  }
}

/** Put in place of a written slot, so it is not kept alive. */
const DONE = new ResponseSlot();
DONE.done = true;
