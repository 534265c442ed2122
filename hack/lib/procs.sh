# shellcheck shell=bash
# Process helpers for the local cluster. Sourced by hack/local-cluster.sh.
# Every process we start gets a pid file in $RUN; stop_proc only ever signals those pids.

log() { echo "[local-cluster] $*" >&2; }
die() { echo "[local-cluster] error: $*" >&2; exit 1; }

# free_port prints a TCP port on 127.0.0.1 that nothing listens on and that no other
# caller of free_port has handed out from this state dir. Ports come from 20000-32767,
# below Linux's ephemeral range, so outgoing connections don't take them. A port can
# still be taken between this check and the bind: see start_listener.
free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$(( 20000 + RANDOM % 12768 ))
    if [ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ]; then continue; fi
    if grep -qx "$port" "$RUN/ports" 2>/dev/null; then continue; fi
    echo "$port" >>"$RUN/ports"
    echo "$port"
    return 0
  done
  die "no free port found"
}

# start_proc NAME CMD...: runs CMD in its own session (so it outlives this script),
# logs to $RUN/NAME.log and records its pid in $RUN/NAME.pid.
start_proc() {
  local name=$1; shift
  # The child writes its own pid and then execs, so the pid file names the real process.
  # shellcheck disable=SC2016 # $$ and $@ belong to the child shell
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$RUN/$name.pid" "$@" >"$RUN/$name.log" 2>&1 </dev/null &
  for _ in $(seq 1 50); do
    [ -s "$RUN/$name.pid" ] && return 0
    sleep 0.1
  done
  die "$name did not start"
}

# alive NAME: whether the process of NAME's pid file runs.
alive() {
  local pid
  pid=$(cat "$RUN/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# stop_proc NAME... : SIGTERM to the processes of the NAMEs' pid files at once (each
# takes seconds to shut down gracefully), SIGKILL to those still there after 10 s.
stop_proc() {
  local name pid pids=()
  for name in "$@"; do
    pid=$(cat "$RUN/$name.pid" 2>/dev/null) || continue
    if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then pids+=("$pid"); fi
  done
  for _ in $(seq 1 100); do
    alive_pids "${pids[@]}" || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      log "pid $pid ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for name in "$@"; do rm -f "$RUN/$name.pid"; done
}

# kill_proc NAME: SIGKILL to the process of NAME's pid file.
kill_proc() {
  local pid
  pid=$(cat "$RUN/$1.pid" 2>/dev/null) || return 0
  [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
  rm -f "$RUN/$1.pid"
}

# alive_pids PID...: whether any of the PIDs runs.
alive_pids() {
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}

# wait_for NAME SECONDS CMD...: polls CMD every 0.2 s until it succeeds; on timeout,
# or if process NAME died, prints the tail of NAME's log and fails.
wait_for() {
  local name=$1 seconds=$2; shift 2
  local deadline=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    if ! alive "$name"; then
      # start_listener picks another port for this one.
      if grep -q 'address already in use' "$RUN/$name.log" 2>/dev/null; then return 98; fi
      tail -n 30 "$RUN/$name.log" >&2 || true
      die "$name exited (log: $RUN/$name.log)"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 30 "$RUN/$name.log" >&2 || true
      die "$name not ready after ${seconds}s (log: $RUN/$name.log)"
    fi
    sleep 0.2
  done
}

# elapsed START: seconds since START (from date +%s.%N), one decimal.
elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

# start_listener NAME FUNC: runs FUNC (which picks its ports with free_port, starts
# NAME and waits for it) up to three times, as long as NAME died because another
# process bound one of its ports first.
start_listener() {
  local name=$1 start=$2 attempt rc
  for attempt in 1 2 3; do
    rc=0
    "$start" || rc=$?
    [ "$rc" -eq 98 ] || return "$rc"
    log "$name lost a port to another process (attempt $attempt); retrying with new ports"
  done
  die "$name could not bind a port"
}
