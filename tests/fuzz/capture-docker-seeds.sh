#!/usr/bin/env bash
# Captures fuzz-docker-answers' seeds from a real dockerd (root; run by
# hand, not by the suite): a daemon of its own as tests/lib/dockerd.sh
# starts one (own socket and roots, iptables off, no bridge, containers
# with NetworkMode none), a one-file image of the payload (PAYLOAD, e.g.
# build/agsbx-payload), then each answer the provider reads, written as
# SELECTOR STATUS-INDEX BODY (tests/fuzz/fuzz-docker-answers.c). The
# daemon is stopped by its PID.
#   tests/fuzz/capture-docker-seeds.sh PAYLOAD [OUTDIR]
set -euo pipefail
payload=$(realpath "$1")
out=$(realpath -m "${2:-$(dirname "$0")/seeds/docker-answers}")
mkdir -p "$out"
dir=$(mktemp -d /tmp/agsbx-dkseed-XXXXXX)
cat >"$dir/daemon.json" <<JSON
{ "iptables": false, "ip6tables": false, "bridge": "none",
  "runtimes": { "runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]} },
  "data-root": "$dir/data", "exec-root": "$dir/exec", "pidfile": "$dir/dockerd.pid",
  "hosts": ["unix://$dir/docker.sock"] }
JSON
dockerd --config-file "$dir/daemon.json" --containerd-namespace agsbx-seed \
  --containerd-plugins-namespace agsbx-seed-p >"$dir/dockerd.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
api() { curl -s --max-time 60 --unix-socket "$dir/docker.sock" -w '\n%{http_code}' "$@"; }
for _ in $(seq 150); do api http://d/_ping >/dev/null 2>&1 && break; sleep 0.2; done
# seed NAME SELECTOR STATUS-INDEX: the body from the last api call
seed() { local body code; body=$(sed '$d' "$dir/last"); code=$(tail -n1 "$dir/last")
  printf "\\x$(printf %02x "$2")\\x$(printf %02x "$3")%s" "$body" >"$out/$1"; echo "$1: HTTP $code"; }
api http://d/version >"$dir/last"; seed version 0 0
cp "$out/version" "$out/probe-version"; printf '\x06' | dd of="$out/probe-version" bs=1 count=1 conv=notrunc 2>/dev/null
api http://d/info >"$dir/last"; seed info 5 0
mkdir "$dir/img" && cp "$payload" "$dir/img/agsbx-payload"
tar -C "$dir/img" -cf "$dir/img.tar" agsbx-payload
api -X POST -H 'Content-Type: application/x-tar' --data-binary @"$dir/img.tar" \
  'http://d/v1.41/images/create?fromSrc=-&repo=agsbx-seed&tag=1' >/dev/null
create() { api -X POST -H 'Content-Type: application/json' -d "{\"Image\":\"agsbx-seed:1\",\"Cmd\":$1,\"Labels\":{\"agsbx-evidence.run\":\"seed\",\"agsbx-evidence.exec\":\"0123abcd\",\"agsbx-evidence.owner\":\"$$ 1\"},\"HostConfig\":{\"NetworkMode\":\"none\",\"Runtime\":\"${2:-runc}\"}}" http://d/v1.41/containers/create; }
create '["/agsbx-payload","exit","3"]' >"$dir/last"; seed create 1 1
id=$(sed -n 's/.*"Id":"\([0-9a-f]*\)".*/\1/p' "$dir/last")
api -X POST -d '' "http://d/v1.41/containers/$id/start" >/dev/null
api -X POST -d '' "http://d/v1.41/containers/$id/wait?condition=not-running" >"$dir/last"; seed wait-3 2 0
api "http://d/v1.41/containers/$id/json" >"$dir/last"; seed inspect 4 0
api -X POST -H 'Content-Type: application/json' -d '{"Image":"agsbx-seed:absent","Cmd":["x"]}' \
  http://d/v1.41/containers/create >"$dir/last"; seed create-404 1 5
create '["/agsbx-payload","linger","seed"]' >"$dir/last"
lid=$(sed -n 's/.*"Id":"\([0-9a-f]*\)".*/\1/p' "$dir/last")
api -X POST -d '' "http://d/v1.41/containers/$lid/start" >/dev/null
api -X POST -H 'Content-Type: application/json' -d '{"Cmd":["/agsbx-payload","exit","0"],"AttachStdout":true}' \
  "http://d/v1.41/containers/$lid/exec" >"$dir/last"; seed exec-create 1 1
eid=$(sed -n 's/.*"Id":"\([0-9a-f]*\)".*/\1/p' "$dir/last")
api "http://d/v1.41/exec/$eid/json" >"$dir/last"; seed exec-created 3 0
api -X POST -H 'Content-Type: application/json' -d '{"Detach":true}' "http://d/v1.41/exec/$eid/start" >/dev/null
sleep 1
api "http://d/v1.41/exec/$eid/json" >"$dir/last"; seed exec-exited 3 0
api -X POST -d '' "http://d/v1.41/containers/$lid/kill?signal=KILL" >/dev/null
api -X POST -d '' "http://d/v1.41/containers/$lid/wait?condition=not-running" >"$dir/last"; seed wait-killed 2 0
create '["/agsbx-payload","true"]' runsc >"$dir/last"; seed create-runsc 1 1
rid=$(sed -n 's/.*"Id":"\([0-9a-f]*\)".*/\1/p' "$dir/last")
api -X POST -d '' "http://d/v1.41/containers/$rid/start" >/dev/null
api -X POST -d '' "http://d/v1.41/containers/$rid/wait?condition=not-running" >"$dir/last"; seed wait-runsc 2 0
api "http://d/v1.41/containers/$rid/json" >"$dir/last"; seed inspect-runsc 4 0
api 'http://d/v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22agsbx-evidence.run%3Dseed%22%5D%7D' >"$dir/last"; seed list 7 0
for c in "$id" "$lid" "$rid"; do api -X DELETE "http://d/v1.41/containers/$c?force=1" >/dev/null; done
