/**
 * Golden byte fixtures of the consumer group messages (apiKeys 20-28) and of Fetch version 2, in the
 * annotated form docs/protocol.md shows them. test/protocol/golden.test.ts runs them with the other
 * fixtures: each decodes to its message and re-encodes byte for byte, and the docs show exactly these.
 */
import * as p from "../../src/protocol/index.js";

export const GROUP_FIXTURE_TEXT = `
# join-group-request: correlationId 20, group "billing", new member, clientId "conch-js", topic "orders", range, sessionTimeoutMs 10000, rebalanceTimeoutMs 30000
00000038 0014 0001 00000014         ; size 56, apiKey 20, apiVersion 1, correlationId 20
0007 62696c6c696e67                 ; group "billing"
0000                                ; memberId "" (a new member)
0008 636f6e63682d6a73               ; clientId "conch-js"
00000001                            ; topics: 1
0006 6f7264657273                   ;   "orders"
0005 72616e6765                     ; strategy "range"
00002710                            ; sessionTimeoutMs 10000
00007530                            ; rebalanceTimeoutMs 30000

# join-group-response: correlationId 20, generation 3, memberId "conch-js-1", range, partitions 0 and 1 of "orders"
00000035 00000014 0000              ; size 53, correlationId 20, errorCode 0
00000003                            ; generation 3
000a 636f6e63682d6a732d31           ; memberId "conch-js-1"
0005 72616e6765                     ; strategy "range"
00000001                            ; assignment: 1 topic
0006 6f7264657273                   ;   topic "orders"
00000002 00000000 00000001          ;   partitions: 2, namely 0 and 1

# heartbeat-request: correlationId 21, group "billing", memberId "conch-js-1", generation 3
00000021 0015 0001 00000015         ; size 33, apiKey 21, apiVersion 1, correlationId 21
0007 62696c6c696e67                 ; group "billing"
000a 636f6e63682d6a732d31           ; memberId "conch-js-1"
00000003                            ; generation 3

# heartbeat-response: correlationId 21
00000006 00000015 0000              ; size 6, correlationId 21, errorCode 0

# leave-group-request: correlationId 22, group "billing", memberId "conch-js-1"
0000001d 0016 0001 00000016         ; size 29, apiKey 22, apiVersion 1, correlationId 22
0007 62696c6c696e67                 ; group "billing"
000a 636f6e63682d6a732d31           ; memberId "conch-js-1"

# leave-group-response: correlationId 22
00000006 00000016 0000              ; size 6, correlationId 22, errorCode 0

# commit-offsets-request: correlationId 23, group "billing", memberId "conch-js-1", generation 3, orders/0 at 43, orders/1 at 17
0000004d 0017 0001 00000017         ; size 77, apiKey 23, apiVersion 1, correlationId 23
0007 62696c6c696e67                 ; group "billing"
000a 636f6e63682d6a732d31           ; memberId "conch-js-1"
00000003                            ; generation 3
00000002                            ; offsets: 2
0006 6f7264657273 00000000          ;   topic "orders", partition 0
000000000000002b                    ;   offset 43 (the next to read)
0006 6f7264657273 00000001          ;   topic "orders", partition 1
0000000000000011                    ;   offset 17

# commit-offsets-response: correlationId 23
00000006 00000017 0000              ; size 6, correlationId 23, errorCode 0

# fetch-offsets-request: correlationId 24, group "billing", orders/0 and orders/1
0000002d 0018 0001 00000018         ; size 45, apiKey 24, apiVersion 1, correlationId 24
0007 62696c6c696e67                 ; group "billing"
00000002                            ; partitions: 2
0006 6f7264657273 00000000          ;   topic "orders", partition 0
0006 6f7264657273 00000001          ;   topic "orders", partition 1

# fetch-offsets-response: correlationId 24, orders/0 at 43, orders/1 none
00000032 00000018 0000              ; size 50, correlationId 24, errorCode 0
00000002                            ; offsets: 2
0006 6f7264657273 00000000          ;   topic "orders", partition 0
000000000000002b                    ;   offset 43
0006 6f7264657273 00000001          ;   topic "orders", partition 1
ffffffffffffffff                    ;   offset none (-1)

# list-groups-request: correlationId 25
00000008 0019 0001 00000019         ; size 8, apiKey 25, apiVersion 1, correlationId 25

# list-groups-response: correlationId 25, group "billing", Stable, 2 members
00000018 00000019 0000              ; size 24, correlationId 25, errorCode 0
00000001                            ; groups: 1
0007 62696c6c696e67                 ;   group "billing"
02                                  ;   state 2 (Stable)
00000002                            ;   members 2

# describe-group-request: correlationId 26, group "billing"
00000011 001a 0001 0000001a         ; size 17, apiKey 26, apiVersion 1, correlationId 26
0007 62696c6c696e67                 ; group "billing"

# describe-group-response: correlationId 26, group "billing", Stable, generation 3, range, one member owning orders/0 and orders/1
000000b1 0000001a 0000              ; size 177, correlationId 26, errorCode 0
0007 62696c6c696e67                 ; group "billing"
02                                  ; state 2 (Stable)
00000003                            ; generation 3
0005 72616e6765                     ; strategy "range"
00000001                            ; members: 1
000a 636f6e63682d6a732d31           ;   memberId "conch-js-1"
0008 636f6e63682d6a73               ;   clientId "conch-js"
00000001                            ;   assignment: 1 topic
0006 6f7264657273                   ;     topic "orders"
00000002 00000000 00000001          ;     partitions: 2, namely 0 and 1
00000002                            ; partitions: 2
0006 6f7264657273 00000000          ;   topic "orders", partition 0
000a 636f6e63682d6a732d31           ;   owner "conch-js-1"
000000000000002b                    ;   committed 43
0000000000000032                    ;   highWatermark 50
0000000000000007                    ;   lag 7
0006 6f7264657273 00000001          ;   topic "orders", partition 1
000a 636f6e63682d6a732d31           ;   owner "conch-js-1"
ffffffffffffffff                    ;   committed none (-1)
0000000000000011                    ;   highWatermark 17
ffffffffffffffff                    ;   lag none (-1)

# list-groups-v2-request: correlationId 25, ListGroups version 2
00000008 0019 0002 00000019         ; size 8, apiKey 25, apiVersion 2, correlationId 25

# list-groups-v2-response: correlationId 25, native group "billing" Stable with 2 members, Kafka group "reports" of protocol type "consumer" CompletingRebalance with 1
00000034 00000019 0000              ; size 52, correlationId 25, errorCode 0
00000002                            ; groups: 2
0007 62696c6c696e67                 ;   group "billing"
02                                  ;   state 2 (Stable)
00000002                            ;   members 2
00                                  ;   kind 0 (native)
0000                                ;   protocolType ""
0007 7265706f727473                 ;   group "reports"
03                                  ;   state 3 (CompletingRebalance)
00000001                            ;   members 1
01                                  ;   kind 1 (Kafka)
0008 636f6e73756d6572               ;   protocolType "consumer"

# describe-group-v2-request: correlationId 26, DescribeGroup version 2, group "billing"
00000011 001a 0002 0000001a         ; size 17, apiKey 26, apiVersion 2, correlationId 26
0007 62696c6c696e67                 ; group "billing"

# describe-group-v2-response: correlationId 26, as describe-group-response, then kind 1 (Kafka) and protocol type "consumer"
000000bc 0000001a 0000              ; size 188, correlationId 26, errorCode 0
0007 62696c6c696e67                 ; group "billing"
02                                  ; state 2 (Stable)
00000003                            ; generation 3
0005 72616e6765                     ; strategy "range"
00000001                            ; members: 1
000a 636f6e63682d6a732d31           ;   memberId "conch-js-1"
0008 636f6e63682d6a73               ;   clientId "conch-js"
00000001                            ;   assignment: 1 topic
0006 6f7264657273                   ;     topic "orders"
00000002 00000000 00000001          ;     partitions: 2, namely 0 and 1
00000002                            ; partitions: 2
0006 6f7264657273 00000000          ;   topic "orders", partition 0
000a 636f6e63682d6a732d31           ;   owner "conch-js-1"
000000000000002b                    ;   committed 43
0000000000000032                    ;   highWatermark 50
0000000000000007                    ;   lag 7
0006 6f7264657273 00000001          ;   topic "orders", partition 1
000a 636f6e63682d6a732d31           ;   owner "conch-js-1"
ffffffffffffffff                    ;   committed none (-1)
0000000000000011                    ;   highWatermark 17
ffffffffffffffff                    ;   lag none (-1)
01                                  ; kind 1 (Kafka)
0008 636f6e73756d6572               ; protocolType "consumer"

# reset-offsets-request: correlationId 27, group "billing", topic "orders", to 2 (by timestamp), 1700000000000
00000022 001b 0001 0000001b         ; size 34, apiKey 27, apiVersion 1, correlationId 27
0007 62696c6c696e67                 ; group "billing"
0006 6f7264657273                   ; topic "orders"
02                                  ; to 2 (by timestamp)
0000018bcfe56800                    ; value 1700000000000 (ms)

# reset-offsets-response: correlationId 27, orders/0 at 42, orders/1 at 10
00000022 0000001b 0000              ; size 34, correlationId 27, errorCode 0
00000002                            ; offsets: 2
00000000 000000000000002a           ;   partition 0, offset 42
00000001 000000000000000a           ;   partition 1, offset 10

# delete-group-request: correlationId 28, group "billing"
00000011 001c 0001 0000001c         ; size 17, apiKey 28, apiVersion 1, correlationId 28
0007 62696c6c696e67                 ; group "billing"

# delete-group-response: correlationId 28
00000006 0000001c 0000              ; size 6, correlationId 28, errorCode 0

# find-coordinator-request: correlationId 30, group "billing"
00000011 001d 0001 0000001e         ; size 17, apiKey 29, apiVersion 1, correlationId 30
0007 62696c6c696e67                 ; group "billing"

# find-coordinator-response: correlationId 30, broker 2 at 10.0.0.2:7420
00000016 0000001e 0000              ; size 22, correlationId 30, errorCode 0
00000002                            ; brokerId 2
0008 31302e302e302e32               ; host "10.0.0.2"
1cfc                                ; port 7420

# fetch-group-request: correlationId 29, Fetch version 2, as fetch-request plus group "billing", memberId "conch-js-1", generation 3
00000041 0006 0002 0000001d         ; size 65, apiKey 6, apiVersion 2, correlationId 29
0006 6f7264657273                   ; topic "orders"
00000000                            ; partition 0
000000000000002a                    ; offset 42
00100000                            ; maxBytes 1048576
000001f4                            ; maxWaitMs 500
00000001                            ; minBytes 1
0007 62696c6c696e67                 ; group "billing"
000a 636f6e63682d6a732d31           ; memberId "conch-js-1"
00000003                            ; generation 3
`;

export interface GroupCase {
  apiKey?: number;
  apiVersion?: number;
  correlationId: number;
  value: unknown;
  encode(correlationId: number, value: never): Buffer;
  decode(frame: Buffer): unknown;
}

const assignment = [{ topic: "orders", partitions: [0, 1] }];
const describedBilling = {
  group: "billing",
  state: p.GroupState.STABLE,
  generation: 3,
  strategy: "range",
  members: [{ memberId: "conch-js-1", clientId: "conch-js", assignment }],
  partitions: [
    { topic: "orders", partition: 0, owner: "conch-js-1", committed: 43, highWatermark: 50, lag: 7 },
    { topic: "orders", partition: 1, owner: "conch-js-1", committed: -1, highWatermark: 17, lag: -1 },
  ],
};
const empty = (encode: (id: number) => Buffer) => (id: number) => encode(id);

export const groupCases: Record<string, GroupCase> = {
  "join-group-request": {
    apiKey: p.ApiKey.JOIN_GROUP,
    correlationId: 20,
    value: {
      group: "billing",
      memberId: "",
      clientId: "conch-js",
      topics: ["orders"],
      strategy: "range",
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 30_000,
    },
    encode: p.encodeJoinGroupRequest,
    decode: p.decodeJoinGroupRequest,
  },
  "join-group-response": {
    correlationId: 20,
    value: { generation: 3, memberId: "conch-js-1", strategy: "range", assignment },
    encode: p.encodeJoinGroupResponse,
    decode: p.decodeJoinGroupResponse,
  },
  "heartbeat-request": {
    apiKey: p.ApiKey.HEARTBEAT,
    correlationId: 21,
    value: { group: "billing", memberId: "conch-js-1", generation: 3 },
    encode: p.encodeHeartbeatRequest,
    decode: p.decodeHeartbeatRequest,
  },
  "heartbeat-response": {
    correlationId: 21,
    value: undefined,
    encode: empty(p.encodeHeartbeatResponse),
    decode: p.decodeHeartbeatResponse,
  },
  "leave-group-request": {
    apiKey: p.ApiKey.LEAVE_GROUP,
    correlationId: 22,
    value: { group: "billing", memberId: "conch-js-1" },
    encode: p.encodeLeaveGroupRequest,
    decode: p.decodeLeaveGroupRequest,
  },
  "leave-group-response": {
    correlationId: 22,
    value: undefined,
    encode: empty(p.encodeLeaveGroupResponse),
    decode: p.decodeLeaveGroupResponse,
  },
  "commit-offsets-request": {
    apiKey: p.ApiKey.COMMIT_OFFSETS,
    correlationId: 23,
    value: {
      group: "billing",
      memberId: "conch-js-1",
      generation: 3,
      offsets: [
        { topic: "orders", partition: 0, offset: 43 },
        { topic: "orders", partition: 1, offset: 17 },
      ],
    },
    encode: p.encodeCommitOffsetsRequest,
    decode: p.decodeCommitOffsetsRequest,
  },
  "commit-offsets-response": {
    correlationId: 23,
    value: undefined,
    encode: empty(p.encodeCommitOffsetsResponse),
    decode: p.decodeCommitOffsetsResponse,
  },
  "fetch-offsets-request": {
    apiKey: p.ApiKey.FETCH_OFFSETS,
    correlationId: 24,
    value: {
      group: "billing",
      partitions: [
        { topic: "orders", partition: 0 },
        { topic: "orders", partition: 1 },
      ],
    },
    encode: p.encodeFetchOffsetsRequest,
    decode: p.decodeFetchOffsetsRequest,
  },
  "fetch-offsets-response": {
    correlationId: 24,
    value: {
      offsets: [
        { topic: "orders", partition: 0, offset: 43 },
        { topic: "orders", partition: 1, offset: -1 },
      ],
    },
    encode: p.encodeFetchOffsetsResponse,
    decode: p.decodeFetchOffsetsResponse,
  },
  "list-groups-request": {
    apiKey: p.ApiKey.LIST_GROUPS,
    correlationId: 25,
    value: undefined,
    encode: empty(p.encodeListGroupsRequest),
    decode: p.decodeListGroupsRequest,
  },
  "list-groups-response": {
    correlationId: 25,
    value: { groups: [{ group: "billing", state: p.GroupState.STABLE, members: 2 }] },
    encode: p.encodeListGroupsResponse,
    decode: p.decodeListGroupsResponse,
  },
  "describe-group-request": {
    apiKey: p.ApiKey.DESCRIBE_GROUP,
    correlationId: 26,
    value: { group: "billing" },
    encode: p.encodeDescribeGroupRequest,
    decode: p.decodeDescribeGroupRequest,
  },
  "describe-group-response": {
    correlationId: 26,
    value: describedBilling,
    encode: p.encodeDescribeGroupResponse,
    decode: p.decodeDescribeGroupResponse,
  },
  "list-groups-v2-request": {
    apiKey: p.ApiKey.LIST_GROUPS,
    apiVersion: p.GROUP_KIND_VERSION,
    correlationId: 25,
    value: undefined,
    encode: empty(p.encodeListGroupsRequestV2),
    decode: p.decodeListGroupsRequest,
  },
  "list-groups-v2-response": {
    correlationId: 25,
    value: {
      groups: [
        {
          group: "billing",
          state: p.GroupState.STABLE,
          members: 2,
          kind: p.GroupKind.NATIVE,
          protocolType: "",
        },
        {
          group: "reports",
          state: p.GroupState.COMPLETING_REBALANCE,
          members: 1,
          kind: p.GroupKind.KAFKA,
          protocolType: "consumer",
        },
      ],
    },
    encode: p.encodeListGroupsResponseV2,
    decode: p.decodeListGroupsResponseV2,
  },
  "describe-group-v2-request": {
    apiKey: p.ApiKey.DESCRIBE_GROUP,
    apiVersion: p.GROUP_KIND_VERSION,
    correlationId: 26,
    value: { group: "billing" },
    encode: p.encodeDescribeGroupRequestV2,
    decode: p.decodeDescribeGroupRequest,
  },
  "describe-group-v2-response": {
    correlationId: 26,
    value: { ...describedBilling, kind: p.GroupKind.KAFKA, protocolType: "consumer" },
    encode: p.encodeDescribeGroupResponseV2,
    decode: p.decodeDescribeGroupResponseV2,
  },
  "reset-offsets-request": {
    apiKey: p.ApiKey.RESET_OFFSETS,
    correlationId: 27,
    value: { group: "billing", topic: "orders", to: p.ResetTo.TIMESTAMP, value: 1_700_000_000_000 },
    encode: p.encodeResetOffsetsRequest,
    decode: p.decodeResetOffsetsRequest,
  },
  "reset-offsets-response": {
    correlationId: 27,
    value: {
      offsets: [
        { partition: 0, offset: 42 },
        { partition: 1, offset: 10 },
      ],
    },
    encode: p.encodeResetOffsetsResponse,
    decode: p.decodeResetOffsetsResponse,
  },
  "delete-group-request": {
    apiKey: p.ApiKey.DELETE_GROUP,
    correlationId: 28,
    value: { group: "billing" },
    encode: p.encodeDeleteGroupRequest,
    decode: p.decodeDeleteGroupRequest,
  },
  "delete-group-response": {
    correlationId: 28,
    value: undefined,
    encode: empty(p.encodeDeleteGroupResponse),
    decode: p.decodeDeleteGroupResponse,
  },
  "find-coordinator-request": {
    apiKey: p.ApiKey.FIND_COORDINATOR,
    correlationId: 30,
    value: { group: "billing" },
    encode: p.encodeFindCoordinatorRequest,
    decode: p.decodeFindCoordinatorRequest,
  },
  "find-coordinator-response": {
    correlationId: 30,
    value: { brokerId: 2, host: "10.0.0.2", port: 7420 },
    encode: p.encodeFindCoordinatorResponse,
    decode: p.decodeFindCoordinatorResponse,
  },
  "fetch-group-request": {
    apiKey: p.ApiKey.FETCH,
    apiVersion: p.FETCH_GROUP_VERSION,
    correlationId: 29,
    value: {
      topic: "orders",
      partition: 0,
      offset: 42,
      maxBytes: 1_048_576,
      maxWaitMs: 500,
      minBytes: 1,
      group: "billing",
      memberId: "conch-js-1",
      generation: 3,
    },
    encode: p.encodeFetchRequest,
    decode: p.decodeFetchRequest,
  },
};
