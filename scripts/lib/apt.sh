# apt_install WHY PKG...: installs Debian packages, saying so on stderr first (they can
# take minutes), and waits up to 10 minutes for another apt run's lock instead of
# failing at once. `apt-get update` runs once per shell.
. "$(dirname "${BASH_SOURCE[0]}")/ticker.sh"
apt_install() {
  local why=$1; shift
  echo "$(basename "$0"): installing $* from apt ($why)..." >&2
  local t0=$SECONDS lock=(-o DPkg::Lock::Timeout=600)
  if [ -z "${COFFER_APT_UPDATED:-}" ]; then
    ticking "apt-get update" apt-get "${lock[@]}" update -qq && COFFER_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive ticking "apt-get install $*" apt-get "${lock[@]}" install -y -qq "$@" >/dev/null
  echo "$(basename "$0"): installed $* in $((SECONDS - t0)) s" >&2
}
