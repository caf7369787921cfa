# Drives kafka-python 2.0.2 through produce, group consume + commit and admin calls.
# Usage: /usr/bin/python3 kafka_python.py BROKER
import sys
from kafka import KafkaProducer, KafkaConsumer, KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic, NewPartitions, ConfigResource, ConfigResourceType

b = sys.argv[1]
p = KafkaProducer(bootstrap_servers=b)
p.send("t1", key=b"k", value=b"hi", headers=[("h", b"v")], partition=0, timestamp_ms=1700000000000)
p.flush(10)
p.close()
c = KafkaConsumer("t1", bootstrap_servers=b, group_id="g1", auto_offset_reset="earliest",
                  enable_auto_commit=False, consumer_timeout_ms=4000)
for m in c:
    c.commit()
    break
tp = TopicPartition("t1", 0)
c.end_offsets([tp])
c.close()
def attempt(name, f):
    try: f()
    except Exception as e: print(name, e)
a = None
attempt("admin", lambda: None)
try:
    a = KafkaAdminClient(bootstrap_servers=b, request_timeout_ms=3000)
except Exception as e:
    print("admin", e)
if a:
    attempt("create", lambda: a.create_topics([NewTopic("t2", 2, 1)]))
    attempt("partitions", lambda: a.create_partitions({"t2": NewPartitions(3)}))
    attempt("configs", lambda: a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "t1")]))
    attempt("list", lambda: a.list_consumer_groups())
    attempt("describe", lambda: a.describe_consumer_groups(["g1"]))
    attempt("offsets", lambda: a.list_consumer_group_offsets("g1"))
    attempt("delete", lambda: a.delete_topics(["t2"]))
