#!/usr/bin/env bash
# Native protocol throughput with TLS next to plaintext, one broker, one run: `conch bench produce`
# and `conch bench consume` against the plain listener and the TLS listener in turn, three times
# each, printing every run and the medians (docs/performance.md). Needs openssl and a build.
#
#   bench/tls-vs-plain.sh [messages] [size]
set -euo pipefail
MESSAGES=${1:-1000000}
SIZE=${2:-100}
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
$CONCH broker --data-dir "$DIR/data" --port $PORT --tls-port $TLS_PORT --no-http --flush none \
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
