# Starts librdkafka's built-in mock cluster (one broker) and prints its address, then keeps it alive
# until stdin closes. Run with Debian's /usr/bin/python3 (python3-confluent-kafka).
import sys, logging, re, threading
from confluent_kafka import Producer

found = threading.Event()
class Catch(logging.Handler):
    def emit(self, rec):
        m = re.search(r"replaced with (\S+)", rec.getMessage())
        if m and not found.is_set():
            found.set()
            print(m.group(1).rstrip(",."), flush=True)

log = logging.getLogger("mock")
log.addHandler(Catch())
log.setLevel(logging.DEBUG)
p = Producer({"bootstrap.servers": "unused:1", "test.mock.num.brokers": 1, "logger": log})
p.poll(0.5)
found.wait(10)
sys.stdin.read()
