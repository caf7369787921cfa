#!/usr/bin/env bash
# Throughput with TLS next to plaintext, one broker, one run (docs/performance/features.md, "TLS next to
# plaintext"), printing every run and the medians:
# - native protocol: `conch bench produce` and `conch bench consume` against the plain listener and
#   the TLS listener in turn, three times each;
# - Kafka protocol (when kcat is installed): kcat -P of a prepared file of messages, then kcat -C of
#   them, against the plain Kafka listener and the Kafka TLS listener (security.protocol=SSL) in
#   turn, three times each; msg/s is messages over kcat's wall time (start-up included).
# Needs openssl and a build.
#
#   bench/tls-vs-plain.sh [messages] [size] [kafka-messages]
set -euo pipefail
MESSAGES=${1:-1000000}
SIZE=${2:-100}
KAFKA_MESSAGES=${3:-500000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONCH="node $ROOT/bin/conch.js"
DIR=$(mktemp -d)
trap 'kill $BROKER 2>/dev/null || true; wait $BROKER 2>/dev/null || true; rm -rf "$DIR"' EXIT

# A CA and a broker certificate for 127.0.0.1 (P-256: what a deployment would likely use).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=bench-ca \
  -keyout "$DIR/ca.key" -out "$DIR/ca.pem" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "$DIR/broker.key" -out "$DIR/broker.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "$DIR/san.ext"
openssl x509 -req -in "$DIR/broker.csr" -CA "$DIR/ca.pem" -CAkey "$DIR/ca.key" -CAcreateserial \
  -days 2 -extfile "$DIR/san.ext" -out "$DIR/broker.pem" 2>/dev/null

PORT=17420
TLS_PORT=17423
KAFKA_PORT=19092
KAFKA_TLS_PORT=19093
$CONCH broker --data-dir "$DIR/data" --port $PORT --tls-port $TLS_PORT --no-http --flush none \
  --kafka-port $KAFKA_PORT --kafka-tls-port $KAFKA_TLS_PORT \
  --tls-cert "$DIR/broker.pem" --tls-key "$DIR/broker.key" --log-level warn --log-format json &
BROKER=$!
for _ in $(seq 100); do $CONCH topic list -b 127.0.0.1:$PORT >/dev/null 2>&1 && break; sleep 0.1; done

run() { # kind listener run -> msg/s
  local kind=$1 listener=$2 n=$3 args=(-b 127.0.0.1:$PORT)
  [ "$listener" = tls ] && args=(-b 127.0.0.1:$TLS_PORT --tls-ca "$DIR/ca.pem")
  $CONCH bench "$kind" "${args[@]}" --topic "b-$kind-$listener-$n" --messages "$MESSAGES" --size "$SIZE" --json |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s.trim().split("\n").pop());console.log(Math.round(r.msgs_per_s))})'
}
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

for kind in produce consume; do
  plain=() tls=()
  for n in 1 2 3; do
    plain+=("$(run "$kind" plain "$n")")
    tls+=("$(run "$kind" tls "$n")")
  done
  echo "$kind plain: ${plain[*]} msg/s (median $(median "${plain[@]}"))"
  echo "$kind tls:   ${tls[*]} msg/s (median $(median "${tls[@]}"))"
done

command -v kcat >/dev/null 2>&1 || { echo "kafka: kcat is not installed, skipped"; exit 0; }
# One message per line, each SIZE bytes (the newline is the delimiter, not part of it).
node -e '
  const fs = require("node:fs");
  const [n, size] = process.argv.slice(1, 3).map(Number);
  const line = Buffer.alloc(size + 1, 97);
  line[size] = 10;
  const block = Buffer.concat(Array(10000).fill(line));
  const fd = fs.openSync(process.argv[3], "w");
  for (let i = 0; i < n; i += 10000) fs.writeSync(fd, block, 0, line.length * Math.min(10000, n - i));
' "$KAFKA_MESSAGES" "$SIZE" "$DIR/messages.txt"
kafka_run() { # kind listener run -> msg/s
  local kind=$1 listener=$2 n=$3 args=(-b 127.0.0.1:$KAFKA_PORT) start end
  [ "$listener" = tls ] && args=(-b 127.0.0.1:$KAFKA_TLS_PORT -X security.protocol=SSL -X "ssl.ca.location=$DIR/ca.pem")
  local topic="k-$listener-$n"
  start=$(date +%s%N)
  if [ "$kind" = produce ]; then
    kcat "${args[@]}" -P -t "$topic" -p 0 -l "$DIR/messages.txt"
  else
    kcat "${args[@]}" -C -t "$topic" -p 0 -o beginning -e -q >/dev/null
  fi
  end=$(date +%s%N)
  echo $((KAFKA_MESSAGES * 1000000000 / (end - start)))
}
for t in k-plain-1 k-plain-2 k-plain-3 k-tls-1 k-tls-2 k-tls-3; do
  $CONCH topic create "$t" --partitions 1 -b 127.0.0.1:$PORT >/dev/null 2>&1
done
for kind in produce consume; do
  plain=() tls=()
  for n in 1 2 3; do
    plain+=("$(kafka_run "$kind" plain "$n")")
    tls+=("$(kafka_run "$kind" tls "$n")")
  done
  echo "kafka $kind plain: ${plain[*]} msg/s (median $(median "${plain[@]}"))"
  echo "kafka $kind tls:   ${tls[*]} msg/s (median $(median "${tls[@]}"))"
done
