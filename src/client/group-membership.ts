/**
 * A consumer's membership in a group (docs/groups.md), the client side of JoinGroup, Heartbeat and
 * LeaveGroup: joins (waiting out the rebalance, retrying what can be retried), then heartbeats until
 * the broker says the member must rejoin, and leaves. It knows nothing of offsets or messages; the
 * GroupConsumer drives it.
 *
 * `member` is the identity a group member's fetches carry (Fetch version 2), updated in place: the
 * member id when a join completes, the generation when the GroupConsumer takes the assignment (so
 * the generation changes together with the partitions it owns), and the fetchers read it at once.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { decodeHeartbeatResponse, encodeHeartbeatRequest } from "../protocol/heartbeat.js";
import {
  decodeJoinGroupResponse,
  encodeJoinGroupRequest,
  type JoinGroupResponse,
} from "../protocol/join-group.js";
import { decodeLeaveGroupResponse, encodeLeaveGroupRequest } from "../protocol/leave-group.js";
import { Backoff, delay } from "./backoff.js";
import type { CoordinatorLink } from "./coordinator-link.js";
import { abortedError, asConchError } from "./errors.js";
import type { FetchMember } from "./partition-fetcher.js";

export type GroupStrategy = "range" | "roundrobin";

export interface MembershipSettings {
  group: string;
  clientId: string;
  topics: readonly string[];
  strategy: GroupStrategy;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
}

/**
 * Why a member must join again: "rebalance" (its generation still holds until the rebalance
 * completes, so it may commit first), "generation" (its generation is over) or "member" (the group
 * dropped it; it joins again as a new member).
 */
export type RejoinReason = "rebalance" | "generation" | "member";

/** Errors no retry will cure: the request itself is wrong, or the broker does not speak groups. */
export function isFatalGroupError(err: ConchError): boolean {
  return (
    err.code === ErrorCode.INVALID_GROUP ||
    err.code === ErrorCode.INVALID_REQUEST ||
    err.code === ErrorCode.INVALID_TOPIC_NAME ||
    err.code === ErrorCode.MALFORMED_REQUEST ||
    err.code === ErrorCode.UNKNOWN_API ||
    err.code === ErrorCode.UNSUPPORTED_VERSION
  );
}

export class GroupMembership {
  readonly member: FetchMember;
  #manager: Pick<CoordinatorLink, "request">;
  #settings: MembershipSettings;

  constructor(manager: Pick<CoordinatorLink, "request">, settings: MembershipSettings) {
    this.#manager = manager;
    this.#settings = settings;
    this.member = { group: settings.group, memberId: "", generation: 0 };
  }

  /**
   * Joins (or rejoins) and resolves with the assignment once the rebalance completes. Retries
   * retriable failures with backoff; a member the group forgot joins again as a new one. Rejects
   * with ABORTED when `signal` aborts, or with a fatal error.
   */
  async join(signal: AbortSignal): Promise<JoinGroupResponse> {
    const s = this.#settings;
    const backoff = new Backoff({ initialMs: s.retryBackoffMs, maxMs: s.retryBackoffMaxMs });
    for (;;) {
      try {
        const res = await this.#manager.request(
          encodeJoinGroupRequest,
          {
            group: s.group,
            memberId: this.member.memberId,
            clientId: s.clientId,
            topics: [...s.topics],
            strategy: s.strategy,
            sessionTimeoutMs: s.sessionTimeoutMs,
            rebalanceTimeoutMs: s.rebalanceTimeoutMs,
          },
          decodeJoinGroupResponse,
          { signal, extraWaitMs: s.rebalanceTimeoutMs },
        );
        this.member.memberId = res.memberId;
        return res;
      } catch (err) {
        const e = asConchError(err);
        if (signal.aborted) throw abortedError(signal, "join");
        if (isFatalGroupError(e)) throw e;
        if (e.code === ErrorCode.UNKNOWN_MEMBER) {
          this.forget();
          continue;
        }
        await delay(backoff.next(), signal, () => abortedError(signal, "join"));
      }
    }
  }

  /**
   * Heartbeats every `heartbeatIntervalMs` until the broker says the member must rejoin, and
   * resolves with why. Failed heartbeats (a lost connection) are retried at the next interval: if
   * they fail for a whole session the broker drops the member, which the first heartbeat that
   * gets through then reports. Rejects only with ABORTED when `signal` aborts.
   */
  async heartbeatUntilRejoin(signal: AbortSignal): Promise<RejoinReason> {
    const s = this.#settings;
    for (;;) {
      await delay(s.heartbeatIntervalMs, signal, () => abortedError(signal, "heartbeat"));
      try {
        await this.#manager.request(
          encodeHeartbeatRequest,
          { group: s.group, memberId: this.member.memberId, generation: this.member.generation },
          decodeHeartbeatResponse,
          { signal },
        );
      } catch (err) {
        const e = asConchError(err);
        if (signal.aborted) throw abortedError(signal, "heartbeat");
        if (e.code === ErrorCode.REBALANCE_IN_PROGRESS) return "rebalance";
        if (e.code === ErrorCode.ILLEGAL_GENERATION) return "generation";
        if (e.code === ErrorCode.UNKNOWN_MEMBER) {
          this.forget();
          return "member";
        }
      }
    }
  }

  /** Leaves the group (best effort: a member that cannot say goodbye simply times out). */
  async leave(): Promise<void> {
    const memberId = this.member.memberId;
    if (memberId === "") return;
    this.forget();
    try {
      await this.#manager.request(
        encodeLeaveGroupRequest,
        { group: this.#settings.group, memberId },
        decodeLeaveGroupResponse,
        { signal: AbortSignal.timeout(this.#settings.sessionTimeoutMs) },
      );
    } catch {
      // The session runs out on the broker instead.
    }
  }

  /** Drops the identity: the next join is as a new member. */
  forget(): void {
    this.member.memberId = "";
    this.member.generation = 0;
  }
}

export function groupStrategy(name: string | undefined): GroupStrategy {
  if (name === undefined || name === "range" || name === "roundrobin") return name ?? "range";
  throw new ConchError(ErrorCode.INVALID_REQUEST, `strategy must be "range" or "roundrobin", not "${name}"`);
}
