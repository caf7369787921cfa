# Drives confluent-kafka (librdkafka 2.0.2) through produce, group consume + commit and admin calls.
# Usage: /usr/bin/python3 confluent.py BROKER
import sys
from confluent_kafka import Producer, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, NewPartitions, ConfigResource

b = sys.argv[1]
p = Producer({"bootstrap.servers": b, "linger.ms": 5})
p.produce("t1", key=b"k", value=b"hi", headers=[("h", b"v")], partition=0, timestamp=1700000000000)
p.produce("t1", key=None, value=b"two", partition=0, timestamp=1700000000001)
p.flush(10)
c = Consumer({"bootstrap.servers": b, "group.id": "g1", "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "session.timeout.ms": 6000})
c.subscribe(["t1"])
got = 0
for _ in range(40):
    m = c.poll(0.5)
    if m is not None and m.error() is None:
        got += 1
        c.commit(message=m, asynchronous=False)
    if got >= 2:
        break
c.committed([TopicPartition("t1", 0)], timeout=5)
c.get_watermark_offsets(TopicPartition("t1", 0), timeout=5)
c.offsets_for_times([TopicPartition("t1", 0, 1700000000000)], timeout=5)
c.close()
a = AdminClient({"bootstrap.servers": b})
for f in [a.create_topics([NewTopic("t2", 2, 1)], request_timeout=3),
          a.create_partitions([NewPartitions("t2", 3)], request_timeout=3),
          a.describe_configs([ConfigResource("topic", "t1")], request_timeout=3),
          a.delete_topics(["t2"], request_timeout=3)]:
    for fut in f.values():
        try: fut.result(timeout=4)
        except Exception as e: print("admin:", e)
try: a.list_groups(timeout=3)
except Exception as e: print("list_groups:", e)
print("consumed", got)
# An idempotent producer: InitProducerId, and batches with a producer id and sequence.
ip = Producer({"bootstrap.servers": b, "enable.idempotence": True, "linger.ms": 5})
ip.produce("t1", key=b"k", value=b"idempotent", partition=0, timestamp=1700000000002)
ip.flush(10)
