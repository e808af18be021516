# Sourced by the guest scripts of tests/small_host.rs (v2.sh, pi.sh), run
# as root in /job of a ci/small-host VM. Each check writes its files into
# /job/out, which comes back to the test: NAME.stdout, NAME.stderr,
# NAME.status (exit status), and the guest's own readings as NAME.facts,
# "key value" lines, for the test to hold headroom's figures against.
out=/job/out
cg=/sys/fs/cgroup
export HOME=/root LOG_DIR=$out
mkdir -p "$out"

# /job/as-user CMD...: CMD as the user tester (uid 1000), exec'd (no shell
# left beside it in its cgroup), its recordings in /job/out/u.
mkdir -p "$out/u" && chown 1000:1000 "$out/u"
printf '#!/bin/sh\nexec setpriv --reuid 1000 --regid 1000 --clear-groups env LOG_DIR=/job/out/u HOME=/home/tester "$@"\n' >/job/as-user
chmod 755 /job/as-user

# in_cgroup NAME CMD...: CMD alone in cgroup NAME (moved there, then exec'd).
in_cgroup() {
  sh -c 'echo $$ >'"$cg/$1"'/cgroup.procs && shift && exec "$@"' sh "$@"
}

# facts NAME: what this script reads itself, as status should show it.
facts() {
  {
    awk '/^MemTotal:/ {print "mem_total_mib", int($2 / 1024)}
         /^MemAvailable:/ {print "mem_available_mib", int($2 / 1024)}
         /^SwapTotal:/ {print "swap_total_mib", int($2 / 1024)}' /proc/meminfo
    echo "swap_devices $(($(wc -l </proc/swaps) - 1))"
    echo "zram0_disksize_mib $(($(cat /sys/block/zram0/disksize) >> 20))"
    read -r orig compr _ </sys/block/zram0/mm_stat
    echo "zram0_orig_data_size $orig"
    echo "zram0_compr_data_size $compr"
    echo "cores $(nproc)"
    echo "oom_kill $(awk '$1 == "oom_kill" {print $2}' /proc/vmstat)"
    echo "psi $([ -r /proc/pressure/memory ] && cat /proc/pressure/memory >/dev/null 2>&1 && echo yes || echo no)"
    echo "controllers $(tr ' ' , <$cg/cgroup.controllers)"
  } >"$out/$1.facts"
}

# check NAME CMD...: runs CMD, its output and status into NAME.*
check() {
  local name=$1
  shift
  echo "== $name: $*"
  "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"
  echo $? >"$out/$name.status"
  echo "== $name: exit $(cat "$out/$name.status")"
}

# squeeze_project DIR MIB: a make project of four jobs that each grow to
# MIB MiB (tests/small_host/cc1.c as ./cc1, the compiler it stands in for)
# at 160 MiB/s (16 MiB each 100 ms): faster than a real cc1 (sqlite3.c
# -O2 grows at about 15 MiB/s here), slow enough for a governor that looks
# every 250 ms. (At memory speed, 300 MiB/s and more under TCG, a job
# started beside a paused one grew to 300 MiB before it could be paused.)
squeeze_project() {
  mkdir -p "$1"
  cp /job/cc1 "$1/cc1"
  touch "$1/a.c" "$1/b.c" "$1/c.c" "$1/d.c"
  printf 'all: a.o b.o c.o d.o\n%%.o: %%.c\n\tSTEP_MS=100 ./cc1 %s $< && touch $@\n' "$2" >"$1/Makefile"
}
