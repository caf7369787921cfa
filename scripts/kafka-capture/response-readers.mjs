// Reads the mock's responses back into the values Conch's encoders take, so that the golden tests
// can check that re-encoding those values gives the mock's bytes exactly. Used only to write the
// fixtures; a misreading here shows up as a byte mismatch in the tests, never as a pass.
import { KafkaReader } from "../../dist/src/kafka/protocol/index.js";

// A null array where Kafka has none (the mock writes one for an all-topics OffsetFetch) throws here,
// and such a response is left out of the fixtures: the mock is no reference for it.
const arr = (r, f) => Array.from({ length: r.arrayCount(1) }, () => f());
const nullableArr = (r, f) => {
  const n = r.nullableArrayCount(1);
  return n < 0 ? null : Array.from({ length: n }, () => f());
};
const hex = (b) => ({ hex: Buffer.from(b).toString("hex") });
const int32s = (r) => arr(r, () => r.int32());
const throttle = (r, v, from) => (v >= from ? r.int32() : 0);

export const responseReaders = {
  0: (r, v) => {
    const topics = arr(r, () => ({
      name: r.string(),
      partitions: arr(r, () => ({
        index: r.int32(),
        errorCode: r.int16(),
        baseOffset: r.int64(),
        logAppendTimeMs: r.int64(),
        logStartOffset: v >= 5 ? r.int64() : -1,
      })),
    }));
    return { topics, throttleTimeMs: r.int32() };
  },
  1: (r, v) => {
    const throttleTimeMs = r.int32();
    const errorCode = v >= 7 ? r.int16() : 0;
    const sessionId = v >= 7 ? r.int32() : 0;
    const topics = arr(r, () => ({
      topic: r.string(),
      partitions: arr(r, () => ({
        partitionIndex: r.int32(),
        errorCode: r.int16(),
        highWatermark: r.int64(),
        lastStableOffset: r.int64(),
        logStartOffset: v >= 5 ? r.int64() : -1,
        abortedTransactions: nullableArr(r, () => ({ producerId: r.int64(), firstOffset: r.int64() })),
        preferredReadReplica: v >= 11 ? r.int32() : -1,
        records: ((b) => (b === null ? null : hex(b)))(r.nullableBytes()),
      })),
    }));
    return { throttleTimeMs, errorCode, sessionId, topics };
  },
  2: (r, v) => ({
    throttleTimeMs: throttle(r, v, 2),
    topics: arr(r, () => ({
      name: r.string(),
      partitions: arr(r, () => ({
        partitionIndex: r.int32(),
        errorCode: r.int16(),
        timestamp: r.int64(),
        offset: r.int64(),
      })),
    })),
  }),
  3: (r, v) => {
    const throttleTimeMs = throttle(r, v, 3);
    const brokers = arr(r, () => ({
      nodeId: r.int32(),
      host: r.string(),
      port: r.int32(),
      rack: v >= 1 ? r.nullableString() : null,
    }));
    const clusterId = v >= 2 ? r.nullableString() : null;
    const controllerId = v >= 1 ? r.int32() : -1;
    const topics = arr(r, () => ({
      errorCode: r.int16(),
      name: r.string(),
      isInternal: v >= 1 ? r.boolean() : false,
      partitions: arr(r, () => ({
        errorCode: r.int16(),
        partitionIndex: r.int32(),
        leaderId: r.int32(),
        replicaNodes: int32s(r),
        isrNodes: int32s(r),
        offlineReplicas: v >= 5 ? int32s(r) : [],
      })),
    }));
    return { throttleTimeMs, brokers, clusterId, controllerId, topics };
  },
  8: (r, v) => ({
    throttleTimeMs: throttle(r, v, 3),
    topics: arr(r, () => ({
      name: r.string(),
      partitions: arr(r, () => ({ partitionIndex: r.int32(), errorCode: r.int16() })),
    })),
  }),
  9: (r, v) => {
    const throttleTimeMs = throttle(r, v, 3);
    const topics = arr(r, () => ({
      name: r.string(),
      partitions: arr(r, () => ({
        partitionIndex: r.int32(),
        committedOffset: r.int64(),
        committedLeaderEpoch: v >= 5 ? r.int32() : -1,
        metadata: r.nullableString(),
        errorCode: r.int16(),
      })),
    }));
    return { throttleTimeMs, topics, errorCode: v >= 2 ? r.int16() : 0 };
  },
  10: (r, v) => ({
    throttleTimeMs: throttle(r, v, 1),
    errorCode: r.int16(),
    errorMessage: v >= 1 ? r.nullableString() : null,
    nodeId: r.int32(),
    host: r.string(),
    port: r.int32(),
  }),
  11: (r, v) => ({
    throttleTimeMs: throttle(r, v, 2),
    errorCode: r.int16(),
    generationId: r.int32(),
    protocolName: r.string(),
    leader: r.string(),
    memberId: r.string(),
    members: arr(r, () => ({
      memberId: r.string(),
      groupInstanceId: v >= 5 ? r.nullableString() : null,
      metadata: hex(r.bytes()),
    })),
  }),
  12: (r, v) => ({ throttleTimeMs: throttle(r, v, 1), errorCode: r.int16() }),
  13: (r, v) => ({
    throttleTimeMs: throttle(r, v, 1),
    errorCode: r.int16(),
    members:
      v >= 3
        ? arr(r, () => ({ memberId: r.string(), groupInstanceId: r.nullableString(), errorCode: r.int16() }))
        : [],
  }),
  14: (r, v) => ({ throttleTimeMs: throttle(r, v, 1), errorCode: r.int16(), assignment: hex(r.bytes()) }),
  15: (r, v) => ({
    throttleTimeMs: throttle(r, v, 1),
    groups: arr(r, () => ({
      errorCode: r.int16(), groupId: r.string(), groupState: r.string(), protocolType: r.string(), protocolData: r.string(),
      members: arr(r, () => ({
        memberId: r.string(), groupInstanceId: v >= 4 ? r.nullableString() : null, clientId: r.string(),
        clientHost: r.string(), memberMetadata: hex(r.bytes()), memberAssignment: hex(r.bytes()),
      })),
      authorizedOperations: v >= 3 ? r.int32() : -2147483648,
    })),
  }),
  16: (r, v) => ({
    throttleTimeMs: throttle(r, v, 1), errorCode: r.int16(),
    groups: arr(r, () => ({ groupId: r.string(), protocolType: r.string() })),
  }),
  18: (r, v) => {
    if (v < 3) {
      return {
        errorCode: r.int16(),
        apis: arr(r, () => ({ apiKey: r.int16(), min: r.int16(), max: r.int16() })),
        throttleTimeMs: throttle(r, v, 1),
      };
    }
    const errorCode = r.int16();
    const apis = Array.from({ length: r.compactArrayCount(7) }, () => {
      const api = { apiKey: r.int16(), min: r.int16(), max: r.int16() };
      r.skipTaggedFields();
      return api;
    });
    const throttleTimeMs = r.int32();
    r.skipTaggedFields();
    return { errorCode, apis, throttleTimeMs };
  },
  19: (r, v) => topicErrors(r, v >= 2, v >= 1),
  20: (r, v) => topicErrors(r, v >= 1, false),
  22: (r) => ({ throttleTimeMs: r.int32(), errorCode: r.int16(), producerId: r.int64(), producerEpoch: r.int16() }),
  32: (r, v) => ({
    throttleTimeMs: r.int32(),
    results: arr(r, () => ({
      errorCode: r.int16(), errorMessage: r.nullableString(), resourceType: r.int8(), resourceName: r.string(),
      configs: arr(r, () => {
        const c = { name: r.string(), value: r.nullableString(), readOnly: r.boolean() };
        const configSource = v >= 1 ? r.int8() : r.boolean() ? 5 : 1;
        return {
          ...c, configSource, isSensitive: r.boolean(),
          synonyms: v >= 1 ? arr(r, () => ({ name: r.string(), value: r.nullableString(), source: r.int8() })) : [],
        };
      }),
    })),
  }),
  37: (r) => topicErrors(r, true, true),
};

function topicErrors(r, throttled, messages) {
  const throttleTimeMs = throttled ? r.int32() : 0;
  const topics = arr(r, () => ({ name: r.string(), errorCode: r.int16(), errorMessage: messages ? r.nullableString() : null }));
  return { throttleTimeMs, topics };
}

/** The value of a response frame, or undefined when there is no reader for its API. */
export function readResponse(frame, apiKey, version) {
  const read = responseReaders[apiKey];
  if (!read) return undefined;
  const r = new KafkaReader(frame, 8);
  const value = read(r, version);
  r.done();
  return value;
}
