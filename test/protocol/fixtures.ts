/**
 * Golden byte fixtures of every protocol message, in the annotated form docs/protocol.md shows them:
 * a block per message, a `# name: description` line, then hex with `;` comments. The same blocks
 * appear in the docs (a test checks they agree), so the docs can never drift from the bytes.
 *
 * Both fixture batches hold one record: key "k", value "hi", timestamp 1700000000000 ms.
 */

export const FIXTURE_TEXT = `
# handshake-request: correlationId 1, minVersion 1, maxVersion 1, clientId "conch-js"
00000016 0000 0001 00000001         ; size 22, apiKey 0, apiVersion 1, correlationId 1
0001 0001                           ; minVersion 1, maxVersion 1
0008 636f6e63682d6a73               ; clientId "conch-js"

# handshake-response: correlationId 1, version 1, maxFrameBytes 4 MiB + 64 KiB, maxBatchBytes 4 MiB
00000010 00000001 0000              ; size 16, correlationId 1, errorCode 0
0001                                ; version 1
00410000                            ; maxFrameBytes 4259840
00400000                            ; maxBatchBytes 4194304

# create-topic-request: correlationId 2, topic "orders", 3 partitions, retention.ms=86400000
00000030 0001 0001 00000002         ; size 48, apiKey 1, apiVersion 1, correlationId 2
0006 6f7264657273                   ; topic "orders"
00000003                            ; partitions 3
00000001                            ; configs: 1 entry
000c 726574656e74696f6e2e6d73       ; key "retention.ms"
0008 3836343030303030               ; value "86400000"

# create-topic-response: correlationId 2
00000006 00000002 0000              ; size 6, correlationId 2, errorCode 0

# delete-topic-request: correlationId 3, topic "orders"
00000010 0002 0001 00000003         ; size 16, apiKey 2, apiVersion 1, correlationId 3
0006 6f7264657273                   ; topic "orders"

# delete-topic-response: correlationId 3
00000006 00000003 0000              ; size 6, correlationId 3, errorCode 0

# list-topics-request: correlationId 4
00000008 0003 0001 00000004         ; size 8, apiKey 3, apiVersion 1, correlationId 4

# list-topics-response: correlationId 4, topics "events" and "orders"
0000001a 00000004 0000              ; size 26, correlationId 4, errorCode 0
00000002                            ; 2 topics
0006 6576656e7473                   ; "events"
0006 6f7264657273                   ; "orders"

# init-producer-id-request: correlationId 40
00000008 000f 0001 00000028         ; size 8, apiKey 15, apiVersion 1, correlationId 40

# init-producer-id-response: correlationId 40, producer id 7, epoch 0
00000010 00000028 0000              ; size 16, correlationId 40, errorCode 0
0000000000000007 0000               ; producerId 7, producerEpoch 0

# describe-topic-request: correlationId 5, topic "orders"
00000010 0004 0001 00000005         ; size 16, apiKey 4, apiVersion 1, correlationId 5
0006 6f7264657273                   ; topic "orders"

# describe-topic-response: correlationId 5, topic "orders", 2 partitions, flush=sync
0000004b 00000005 0000              ; size 75, correlationId 5, errorCode 0
0006 6f7264657273                   ; topic "orders"
00000002                            ; 2 partitions
00000000                            ; partition 0
0000000000000000                    ;   logStartOffset 0
000000000000002b                    ;   highWatermark 43
00000001                            ; partition 1
000000000000000a                    ;   logStartOffset 10
0000000000000011                    ;   highWatermark 17
00000001                            ; configs: 1 entry
0005 666c757368                     ; key "flush"
0004 73796e63                       ; value "sync"

# describe-topic-v2-request: correlationId 5, DescribeTopic version 2, topic "orders"
00000010 0004 0002 00000005         ; size 16, apiKey 4, apiVersion 2, correlationId 5
0006 6f7264657273                   ; topic "orders"

# describe-topic-v2-response: correlationId 5, topic "orders", 2 partitions (offsets 20-22 of partition 0 quarantined), flush=sync
00000094 00000005 0000              ; size 148, correlationId 5, errorCode 0
0006 6f7264657273                   ; topic "orders"
00000002                            ; 2 partitions
00000000                            ; partition 0
0000000000000000                    ;   logStartOffset 0
000000000000002b                    ;   highWatermark 43
00000001                            ;   quarantined: 1 range
0000000000000014                    ;     firstOffset 20
0000000000000016                    ;     lastOffset 22
0018 3030303030303030303030303030303030303030 2e77616c ; segment "00000000000000000000.wal"
0015 626174636820435243333243206d69736d61746368 ; reason "batch CRC32C mismatch"
00000001                            ; partition 1
000000000000000a                    ;   logStartOffset 10
0000000000000011                    ;   highWatermark 17
00000000                            ;   quarantined: none
00000001                            ; configs: 1 entry
0005 666c757368                     ; key "flush"
0004 73796e63                       ; value "sync"

# describe-topic-v3-request: correlationId 5, DescribeTopic version 3, topic "orders", scope 0 (the cluster's)
00000011 0004 0003 00000005         ; size 17, apiKey 4, apiVersion 3, correlationId 5
0006 6f7264657273                   ; topic "orders"
00                                  ; scope 0: the cluster's partitions, figures asked of their leaders

# describe-topic-v3-response: correlationId 5, topic "orders", partition 0 led by broker 2, partition 1 by broker 3 (its figures not known here), flush=sync
000000b9 00000005 0000              ; size 185, correlationId 5, errorCode 0
0006 6f7264657273                   ; topic "orders"
00000002                            ; 2 partitions
00000000                            ; partition 0
00000002                            ;   leaderId 2
00000001                            ;   leaderEpoch 1
00000002 00000002 00000003          ;   replicas [2, 3]
00000002 00000002 00000003          ;   isr [2, 3]
01                                  ;   figuresKnown 1
0000000000000000                    ;   logStartOffset 0
000000000000002d                    ;   logEndOffset 45
000000000000002b                    ;   highWatermark 43
0000000000001000                    ;   sizeBytes 4096
00000001                            ;   segments 1
00000000                            ;   quarantined: none
00000001                            ; partition 1
00000003                            ;   leaderId 3
00000000                            ;   leaderEpoch 0
00000002 00000003 00000001          ;   replicas [3, 1]
00000001 00000003                   ;   isr [3]
00                                  ;   figuresKnown 0: its leader did not answer in time
0000000000000000                    ;   logStartOffset (0: not known)
0000000000000000                    ;   logEndOffset (0: not known)
0000000000000000                    ;   highWatermark (0: not known)
0000000000000000                    ;   sizeBytes (0: not known)
00000000                            ;   segments (0: not known)
00000000                            ;   quarantined: none
00000001                            ; configs: 1 entry
0005 666c757368                     ; key "flush"
0004 73796e63                       ; value "sync"

# produce-request: correlationId 6, topic "orders", partition 0, acks 1, timeoutMs 30000, one batch
0000006e 0005 0001 00000006         ; size 110, apiKey 5, apiVersion 1, correlationId 6
0006 6f7264657273                   ; topic "orders"
00000000                            ; partition 0
01                                  ; acks 1 (leader)
00007530                            ; timeoutMs 30000
00000051                            ; records: 81 bytes
c1 17979cfe362a0000                 ;   batch: magic, timestamp (ns)
0000000000000000                    ;   base offset (0: the broker stamps it)
00000014 00000020 00000001          ;   metadata size 20, payload size 32, record count 1
043337e6 0000 0000                  ;   CRC32C, attributes, reserved
ffffffffffffffff 00000000           ;   producer id (none), base sequence
c1 17979cfe362a0000                 ;   record: magic, timestamp (ns)
0000000000000000                    ;   offset delta 0
00000001 00000002 00000001          ;   key size 1, value size 2, count 1
6b 6869                             ;   key "k", value "hi"

# produce-response: correlationId 6, baseOffset 42, lastOffset 42
00000016 00000006 0000              ; size 22, correlationId 6, errorCode 0
000000000000002a                    ; baseOffset 42
000000000000002a                    ; lastOffset 42

# produce-v2-request: correlationId 8, topic "orders", acks 1, timeoutMs 30000, partitions 0 and 3 with one batch each
000000cb 0005 0002 00000008         ; size 203, apiKey 5, apiVersion 2, correlationId 8
0006 6f7264657273                   ; topic "orders"
01                                  ; acks 1 (leader)
00007530                            ; timeoutMs 30000
00000002                            ; partitions: 2 entries
00000000                            ; partition 0
00000051                            ; records: 81 bytes
c1 17979cfe362a0000                 ;   batch: magic, timestamp (ns)
0000000000000000                    ;   base offset (0: the broker stamps it)
00000014 00000020 00000001          ;   metadata size 20, payload size 32, record count 1
043337e6 0000 0000                  ;   CRC32C, attributes, reserved
ffffffffffffffff 00000000           ;   producer id (none), base sequence
c1 17979cfe362a0000                 ;   record: magic, timestamp (ns)
0000000000000000                    ;   offset delta 0
00000001 00000002 00000001          ;   key size 1, value size 2, count 1
6b 6869                             ;   key "k", value "hi"
00000003                            ; partition 3
00000051                            ; records: 81 bytes, the same batch
c1 17979cfe362a0000
0000000000000000
00000014 00000020 00000001
043337e6 0000 0000
ffffffffffffffff 00000000
c1 17979cfe362a0000
0000000000000000
00000001 00000002 00000001
6b 6869

# produce-v2-response: correlationId 8, partition 0 stored at 42, partition 3 NOT_LEADER
00000048 00000008 0000              ; size 72, correlationId 8, errorCode 0
00000002                            ; partitions: 2 results
00000000 0000                       ; partition 0, errorCode 0
000000000000002a                    ; baseOffset 42
000000000000002a                    ; lastOffset 42
0000                                ; message ""
00000003 0032                       ; partition 3, errorCode 50 (NOT_LEADER)
ffffffffffffffff                    ; baseOffset none
ffffffffffffffff                    ; lastOffset none
000e 6e6f7420746865206c6561646572   ; message "not the leader"

# produce-v3-request: correlationId 9, topic "orders", acks 1, timeoutMs 30000, one partitioned batch: a record for partition 0, one for partition 3
0000008a 0005 0003 00000009         ; size 138, apiKey 5, apiVersion 3, correlationId 9
0006 6f7264657273                   ; topic "orders"
01                                  ; acks 1 (leader)
00007530                            ; timeoutMs 30000
00000071                            ; records: 113 bytes
c1 17979cfe362a0000                 ;   batch: magic, timestamp (ns)
0000000000000000                    ;   base offset (always 0)
00000014 00000040 00000002          ;   metadata size 20, payload size 64, record count 2
c930b84f 0020 0000                  ;   CRC32C, attributes 0x0020 (partitioned), reserved
ffffffffffffffff 00000000           ;   producer id (none), base sequence
c1 17979cfe362a0000                 ;   record: magic, timestamp (ns)
0000000000000000                    ;   partition 0
00000001 00000002 00000001          ;   key size 1, value size 2, count 1
6b 6869                             ;   key "k", value "hi"
c1 17979cfe362a0000                 ;   record: magic, timestamp (ns)
0000000000000003                    ;   partition 3
00000001 00000002 00000001          ;   key size 1, value size 2, count 1
6b 6869                             ;   key "k", value "hi"

# fetch-request: correlationId 7, topic "orders", partition 0, offset 42, maxBytes 1 MiB, maxWaitMs 500, minBytes 1
00000028 0006 0001 00000007         ; size 40, apiKey 6, apiVersion 1, correlationId 7
0006 6f7264657273                   ; topic "orders"
00000000                            ; partition 0
000000000000002a                    ; offset 42
00100000                            ; maxBytes 1048576
000001f4                            ; maxWaitMs 500
00000001                            ; minBytes 1

# fetch-response: correlationId 7, highWatermark 43, logStartOffset 0, the produced batch as stored
0000006b 00000007 0000              ; size 107, correlationId 7, errorCode 0
000000000000002b                    ; highWatermark 43
0000000000000000                    ; logStartOffset 0
00000051                            ; records: 81 bytes
c1 17979cfe362a0000                 ;   batch: magic, timestamp (ns)
000000000000002a                    ;   base offset 42, as stamped by the broker
00000014 00000020 00000001          ;   metadata size 20, payload size 32, record count 1
043337e6 0000 0000                  ;   CRC32C (unchanged by the stamp), attributes, reserved
ffffffffffffffff 00000000           ;   producer id (none), base sequence
c1 17979cfe362a0000                 ;   record: magic, timestamp (ns)
0000000000000000                    ;   offset delta 0
00000001 00000002 00000001          ;   key size 1, value size 2, count 1
6b 6869                             ;   key "k", value "hi"

# list-offsets-request: correlationId 8, topic "orders", partition 0, spec 2 (by timestamp), timestampMs 1700000000000
0000001d 0007 0001 00000008         ; size 29, apiKey 7, apiVersion 1, correlationId 8
0006 6f7264657273                   ; topic "orders"
00000000                            ; partition 0
02                                  ; spec 2 (by timestamp)
0000018bcfe56800                    ; timestampMs 1700000000000

# list-offsets-response: correlationId 8, found, offset 42
0000000f 00000008 0000              ; size 15, correlationId 8, errorCode 0
01                                  ; found
000000000000002a                    ; offset 42

# alter-topic-request: correlationId 9, topic "orders", retention.ms=3600000
0000002b 0008 0001 00000009         ; size 43, apiKey 8, apiVersion 1, correlationId 9
0006 6f7264657273                   ; topic "orders"
00000001                            ; configs: 1 entry
000c 726574656e74696f6e2e6d73       ; key "retention.ms"
0007 33363030303030                 ; value "3600000"

# alter-topic-response: correlationId 9
00000006 00000009 0000              ; size 6, correlationId 9, errorCode 0

# create-partitions-request: correlationId 12, topic "orders", 6 partitions in all
00000014 000c 0001 0000000c         ; size 20, apiKey 12, apiVersion 1, correlationId 12
0006 6f7264657273                   ; topic "orders"
00000006                            ; partitions 6 (the new total)

# create-partitions-response: correlationId 12
00000006 0000000c 0000              ; size 6, correlationId 12, errorCode 0

# reassign-partitions-request: correlationId 17, orders/0 to brokers 4, 2, 3
00000028 0011 0001 00000011         ; size 40, apiKey 17, apiVersion 1, correlationId 17
00000001                            ; moves: 1
0006 6f7264657273                   ; topic "orders"
00000000                            ; partition 0
00000003                            ; replicas: 3
00000004 00000002 00000003          ; brokers 4, 2, 3 (4 is the preferred leader)

# reassign-partitions-response: correlationId 17
00000006 00000011 0000              ; size 6, correlationId 17, errorCode 0

# fetch-stream-request: correlationId 11, topic "orders", partition 0, offset 42, maxBytes 1 MiB, maxWaitMs 500, minBytes 1, window 2 MiB, no group
00000034 0009 0001 0000000b         ; size 52, apiKey 9, apiVersion 1, correlationId 11
0006 6f7264657273                   ; topic "orders"
00000000                            ; partition 0
000000000000002a                    ; offset 42
00100000                            ; maxBytes 1048576
000001f4                            ; maxWaitMs 500
00000001                            ; minBytes 1
00200000                            ; windowBytes 2097152
0000                                ; group "" (none)
0000                                ; memberId ""
00000000                            ; generation 0

# stream-credit-request: correlationId 12, stream 11, 1 MiB taken
00000010 000a 0001 0000000c         ; size 16, apiKey 10, apiVersion 1, correlationId 12
0000000b                            ; streamId 11
00100000                            ; bytes 1048576

# stream-cancel-request: correlationId 13, stream 11
0000000c 000b 0001 0000000d         ; size 12, apiKey 11, apiVersion 1, correlationId 13
0000000b                            ; streamId 11

# replica-fetch-request: correlationId 30, topic "orders", partition 0, replica 2, leader epoch 4, fetchOffset 42, lastFetchedEpoch 3, maxBytes 1 MiB, maxWaitMs 500, window 4 MiB
00000034 0013 0001 0000001e         ; size 52, apiKey 19, apiVersion 1, correlationId 30
0006 6f7264657273                   ; topic "orders"
00000000                            ; partition 0
00000002                            ; replicaId 2
00000004                            ; currentLeaderEpoch 4
000000000000002a                    ; fetchOffset 42
00000003                            ; lastFetchedEpoch 3
00100000                            ; maxBytes 1048576
000001f4                            ; maxWaitMs 500
00400000                            ; windowBytes 4194304

# replica-fetch-response: correlationId 30, leader epoch 4, highWatermark 42, logStartOffset 0, epoch 4 from 40, the produced batch as stored
0000008c 0000001e 0000              ; size 140, correlationId 30, errorCode 0
00000004                            ; leaderEpoch 4
000000000000002a                    ; highWatermark 42
0000000000000000                    ; logStartOffset 0
00 ffffffff 0000000000000000        ; diverging 0, divergingEpoch none, divergingEndOffset 0
00000001                            ; epochs: 1
00000004 0000000000000028           ;   epoch 4 starts at offset 40
00000051                            ; records: 81 bytes
c1 17979cfe362a0000                 ;   batch: magic, timestamp (ns)
000000000000002a                    ;   base offset 42, as the leader stamped it
00000014 00000020 00000001          ;   metadata size 20, payload size 32, record count 1
043337e6 0000 0000                  ;   CRC32C, attributes, reserved
ffffffffffffffff 00000000           ;   producer id (none), base sequence
c1 17979cfe362a0000                 ;   record: magic, timestamp (ns)
0000000000000000                    ;   offset delta 0
00000001 00000002 00000001          ;   key size 1, value size 2, count 1
6b 6869                             ;   key "k", value "hi"

# replica-fetch-diverging-response: correlationId 30, leader epoch 4, highWatermark 40, the follower's epoch 3 ends at 40 here
0000002f 0000001e 0000              ; size 47, correlationId 30, errorCode 0
00000004                            ; leaderEpoch 4
0000000000000028                    ; highWatermark 40
0000000000000000                    ; logStartOffset 0
01 00000003 0000000000000028        ; diverging 1, divergingEpoch 3, divergingEndOffset 40
00000000                            ; epochs: 0
00000000                            ; records: 0 bytes

# error-response: correlationId 10, UNKNOWN_TOPIC (8), "unknown topic orders"
0000001c 0000000a 0008              ; size 28, correlationId 10, errorCode 8
0014 756e6b6e6f776e20746f706963206f7264657273 ; message "unknown topic orders"

# sasl-handshake-request: correlationId 40, mechanism "SCRAM-SHA-256"
00000017 000d 0001 00000028         ; size 23, apiKey 13, apiVersion 1, correlationId 40
000d 5343 52414d2d5348412d323536    ; mechanism "SCRAM-SHA-256"

# sasl-handshake-response: correlationId 40, mechanisms "SCRAM-SHA-256", "SCRAM-SHA-512"
00000028 00000028 0000              ; size 40, correlationId 40, errorCode 0
00000002                            ; mechanisms: 2
000d 534352414d2d5348412d323536     ; "SCRAM-SHA-256"
000d 534352414d2d5348412d353132     ; "SCRAM-SHA-512"

# sasl-authenticate-request: correlationId 41, SCRAM client-first "n,,n=alice,r=abc"
0000001c 000e 0001 00000029         ; size 28, apiKey 14, apiVersion 1, correlationId 41
00000010 6e2c2c6e3d616c6963652c723d616263 ; authBytes "n,,n=alice,r=abc"

# sasl-authenticate-response: correlationId 41, authBytes "v=c2ln"
00000010 00000029 0000              ; size 16, correlationId 41, errorCode 0
00000006 763d63326c6e               ; authBytes "v=c2ln"

# metadata-request: correlationId 42, topics "t"
0000000f 0010 0001 0000002a         ; size 15, apiKey 16, apiVersion 1, correlationId 42
00000001 000174                     ; topics: 1 x "t"

# metadata-response: correlationId 42, broker 2 at "h":7420, no controller, topic "t" with partition 0 offline at epoch 3
00000040 0000002a 0000              ; size 64, correlationId 42, errorCode 0
00000002 ffffffff                   ; brokerId 2, controllerId none
00000001 00000002 000168 1cfc       ; brokers: 1 x (id 2, host "h", port 7420)
00000001 000174 0000                ; topics: 1 x (name "t", errorCode 0,
00000001 00000000 ffffffff          ; partitions: 1 x (partition 0, leaderId none,
00000003 00000001 00000002          ; leaderEpoch 3, replicas [2],
00000000                            ; isr []))
`;

/** Name -> bytes of every `# name: ...` block in annotated fixture text (a file or the docs). */
export function parseFixtures(text: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let name: string | null = null;
  let hex = "";
  const flush = (): void => {
    if (name !== null) {
      if (out.has(name)) throw new Error(`fixture ${name} appears twice`);
      out.set(name, Buffer.from(hex, "hex"));
    }
    name = null;
    hex = "";
  };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const title = /^# ([a-z0-9-]+):/.exec(line);
    if (title) {
      flush();
      name = title[1]!;
      continue;
    }
    if (name === null) continue;
    const data = (line.split(";")[0] ?? "").replace(/\s+/g, "");
    if (data === "" || !/^([0-9a-f]{2})+$/.test(data)) {
      flush();
      continue;
    }
    hex += data;
  }
  flush();
  return out;
}
