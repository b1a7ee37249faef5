#!/bin/sh
# examples/hello_client.c against examples/hello_server.c over stdio and
# Streamable HTTP: the three outcomes and their exit statuses.
# usage: hello_client.sh CLIENT SERVER
set -u
client=$1 server=$2
passed=0 failed=0
check() { # check NAME WANT_STATUS WANT_TEXT -- ARGS...
  name=$1 want=$2 text=$3
  shift 4
  out=$("$client" "$@" 2>&1)
  rc=$?
  if [ $rc -eq "$want" ] && printf '%s\n' "$out" | grep -qF -- "$text"; then
    passed=$((passed + 1)); echo "ok $name"
  else
    failed=$((failed + 1)); echo "FAIL $name: exit $rc (want $want), output:"; printf '%s\n' "$out"
  fi
}
check stdio.result 0 'result: Hello, Ada!' -- greet '{"name":"Ada"}' -- "$server"
check stdio.lists 0 'tool: greet' -- greet '{"name":"Ada"}' -- "$server"
check stdio.tool_failure 1 'tool failure: name must not be empty' -- greet '{"name":""}' -- "$server"
check stdio.invalid_arguments 1 'tool failure: Invalid arguments for tool greet' -- greet '{}' -- "$server"
check stdio.unknown_tool 2 'protocol error -32602' -- nosuch '{}' -- "$server"
check stdio.no_server 3 'cannot connect' -- greet '{}' -- /nonexistent/server

dir=$(mktemp -d)
"$server" --http 127.0.0.1:0 >"$dir/out" 2>"$dir/err" &
pid=$!
url=""
for i in $(seq 1 100); do
  url=$(sed -n 's/.*listening on //p' "$dir/out" "$dir/err" | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -n "$url" ]; then
  check http.result 0 'result: Hello, Grace!' -- greet '{"name":"Grace"}' --url "$url"
  check http.unknown_tool 2 'protocol error' -- nosuch '{}' --url "$url"
else
  failed=$((failed + 1)); echo "FAIL http: the server did not start"; cat "$dir/err"
fi
kill $pid 2>/dev/null; wait $pid 2>/dev/null
rm -rf "$dir"
echo "hello_client: $passed passed, $failed failed"
[ $failed -eq 0 ]
