# shellcheck shell=sh disable=SC2154,SC2034 # port1..3 are set through eval; lb, hp and pids are for the caller
# Sourced by tests/aml/lb.sh (aml.suite.lb) and bench/aml/lb.sh: three
# mcp-server-aml --http servers on one store, and HAProxy running
# deploy/haproxy.cfg in front of them, all on loopback. The caller kills
# what is listed in $pids on exit.

# lb_servers MCP_SERVER_AML DB WORK ACTOR: starts three servers on DB (free
# ports, actors ACTOR1..ACTOR3, logs WORK/srvN.log); sets pid1..pid3 and
# port1..port3 and adds the pids to $pids. Returns 1, the log of the
# server that did not start on stderr, when one did not.
lb_servers() {
  for _lb_n in 1 2 3; do
    "$1" --db "$2" --http 127.0.0.1:0 --actor "$4$_lb_n" >"$3/srv$_lb_n.out" 2>"$3/srv$_lb_n.log" &
    eval "pid$_lb_n=$!"
    pids="$pids $!"
  done
  for _lb_n in 1 2 3; do
    _lb_port=""
    for _ in $(seq 1 100); do
      _lb_port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/mcp.*|\1|p' "$3/srv$_lb_n.log" | head -n 1)
      [ -n "$_lb_port" ] && break
      sleep 0.1
    done
    [ -n "$_lb_port" ] || { cat "$3/srv$_lb_n.log" >&2; return 1; }
    eval "port$_lb_n=$_lb_port"
  done
}

# lb_haproxy SOURCE_DIR WORK [SED_ARGUMENT...]: HAProxy with
# SOURCE_DIR/deploy/haproxy.cfg as it is but for a temporary folder and this
# user (no chroot, user, group or stats socket under /run; the log on
# stdout, into WORK/haproxy.log), bound to a free port, the three servers of
# lb_servers as its backends, then the caller's own sed arguments
# (WORK/haproxy.cfg is what runs). Sets lb (its port) and hp (its pid) and
# adds hp to $pids. Returns 1, HAProxy's log on stderr, when it did not start.
lb_haproxy() {
  _lb_src=$1 _lb_work=$2
  shift 2
  lb=""
  for _ in 1 2 3 4 5 6 7 8; do
    _lb_try=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 30000 ))
    sed -e '/^[[:space:]]*\(chroot\|user\|group\|stats socket\)[[:space:]]/d' \
        -e 's|^\([[:space:]]*\)log /dev/log local0|\1log stdout format raw local0|' \
        -e "s|^\([[:space:]]*\)bind 127\.0\.0\.1:8080$|\1bind 127.0.0.1:$_lb_try|" \
        -e "s|server aml1 127\.0\.0\.1:8081|server aml1 127.0.0.1:$port1|" \
        -e "s|server aml2 127\.0\.0\.1:8082|server aml2 127.0.0.1:$port2|" \
        -e "s|server aml3 127\.0\.0\.1:8083|server aml3 127.0.0.1:$port3|" \
        "$@" "$_lb_src/deploy/haproxy.cfg" >"$_lb_work/haproxy.cfg"
    haproxy -db -f "$_lb_work/haproxy.cfg" >"$_lb_work/haproxy.log" 2>&1 &
    hp=$!
    sleep 0.5
    if kill -0 "$hp" 2>/dev/null; then
      lb=$_lb_try
      pids="$pids $hp"
      return 0
    fi
  done
  cat "$_lb_work/haproxy.log" >&2
  return 1
}

# lb_stop: ends what $pids lists (SIGTERM, then SIGKILL 0.3 s later) and waits for it; for a trap on EXIT.
lb_stop() {
  for _lb_p in $pids; do kill "$_lb_p" 2>/dev/null; done
  sleep 0.3
  for _lb_p in $pids; do kill -9 "$_lb_p" 2>/dev/null; done
  wait 2>/dev/null
}
