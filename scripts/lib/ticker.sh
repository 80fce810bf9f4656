# ticking WHAT CMD...: runs CMD in the foreground's stead, saying on stderr every 15 s
# that WHAT is still running (cold builds and the long test steps are otherwise silent
# for minutes). Returns CMD's exit status.
ticking() {
  local what=$1; shift
  "$@" & local pid=$! n=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1; n=$((n + 1))
    [ $((n % 15)) -ne 0 ] || echo "$(basename "$0"): $what still running ($n s)" >&2
  done
  wait "$pid"
}
