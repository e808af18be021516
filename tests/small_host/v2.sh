# The cgroup v2 boot (1 GiB, 2 vCPUs, PSI, zram and a swap file): the
# checks tests/small_host.rs reads back. Run as root by ci/small-host.
. /job/common.sh
# As systemd leaves it: the root cgroup hands memory and cpu to its children.
echo "+memory +cpu" >$cg/cgroup.subtree_control

# status on the host as booted: zram holds only its swap header (an idle
# device: one page stored in a few bytes).
facts status
check status headroom status
check status_json headroom status --json

# run as root: the build's own v2 cgroup, made and removed.
check root headroom run --run-id root -- cat /proc/self/cgroup
ls $cg | grep headroom- >"$out/root.left"

# as a user in a delegated cgroup (as systemd-run --user --scope): the
# user owns the directory and its cgroup.procs, cgroup.subtree_control and
# cgroup.threads; headroom is alone in it (exec).
delegate() { # delegate NAME: a cgroup the user owns
  mkdir $cg/"$1"
  chown 1000:1000 $cg/"$1" $cg/"$1"/cgroup.procs $cg/"$1"/cgroup.subtree_control $cg/"$1"/cgroup.threads
}
delegate deleg
check deleg in_cgroup deleg /job/as-user headroom run --run-id deleg -- cat /proc/self/cgroup
ls $cg/deleg | grep headroom- >"$out/deleg.left"

# A shared scope: another process of the user's is in the same cgroup, so
# no child can get memory (no-internal-process rule): the build is its
# process tree. The scope's limit (200 MiB, no swap, set by root) kills a
# process of the build that is not a compiler, growing over 2 s. The
# kernel names its victims in /dev/kmsg: as Debian boots
# (kernel.dmesg_restrict 1) a user cannot read it; then as Raspberry Pi
# OS's kernel has it (0).
delegate shared
echo 200M >$cg/shared/memory.max
echo 0 >$cg/shared/memory.swap.max
in_cgroup shared /job/as-user sleep 600 >/dev/null 2>&1 &
mkdir -p /job/hog && cp /job/memhog /job/hog/ && chown -R 1000:1000 /job/hog
printf 'all:\n\tSTEP_MS=100 ./memhog 320\n' >/job/hog/Makefile
echo "dmesg_restrict $(cat /proc/sys/kernel/dmesg_restrict)" >"$out/shared.facts"
check shared in_cgroup shared /job/as-user headroom run --run-id shared -- make -C /job/hog
cat $cg/shared/memory.events >"$out/shared.events"
echo 0 >/proc/sys/kernel/dmesg_restrict
check shared_kmsg in_cgroup shared /job/as-user headroom run --run-id shared_kmsg -- make -C /job/hog
cat $cg/shared/memory.events >"$out/shared_kmsg.events"
echo 1 >/proc/sys/kernel/dmesg_restrict
pkill -u 1000 -x sleep

# A user in a cgroup it does not own: no permission, the process tree.
mkdir $cg/locked
check locked in_cgroup locked /job/as-user headroom run --run-id locked -- true

# OOM kills counted from memory.events: root in a 150 MiB cgroup with no
# swap; run's build cgroup is a child of it, and a job of 300 MiB is killed.
mkdir $cg/lim
echo 150M >$cg/lim/memory.max
echo 0 >$cg/lim/memory.swap.max
check lim in_cgroup lim headroom run --run-id lim -- /job/cc1 300 lim.c
cat $cg/lim/memory.events >"$out/lim.events"

# A container on a 6.12 kernel without CONFIG_MEMCG_V1: a 300 MiB v2
# cgroup, /sys/fs/cgroup not mounted, a /proc/cgroups with no memory line.
mkdir $cg/c300
echo 300M >$cg/c300/memory.max
grep -v '^memory' /proc/cgroups >/job/cgroups-612
container() {
  unshare -m sh -c 'echo $$ >'"$cg"'/c300/cgroup.procs && umount -l '"$cg"' &&
    mount --bind /job/cgroups-612 /proc/cgroups && exec "$@"' sh "$@"
}
check c300_jobs container headroom jobs --explain
check c300_status container headroom status --json

# A limit above a cgroup namespace, as a BuildKit step under a limited
# builder sees it: 300 MiB on a parent that no file inside shows (v2 has no
# hierarchical_memory_limit), zram swap allowed. Inside: its own cgroup
# namespace and cgroup2 mount, run --jobserver --explain -- make -j4 of four
# jobs of 150 MiB. The ceiling is noticed from the reclaim, said once, the
# newest jobs paused, nothing OOM-killed.
mkdir -p $cg/builder/step
echo +memory >$cg/builder/cgroup.subtree_control
echo 300M >$cg/builder/memory.max
squeeze_project /job/hid 150
printf '#!/bin/sh\necho $$ >%s/builder/step/cgroup.procs || exit 97\nexec unshare --cgroup --mount --propagation private /job/in-step-ns "$@"\n' $cg >/job/in-step
printf '#!/bin/sh\numount -l %s && mount -t cgroup2 cgroup2 %s || exit 98\nexec "$@"\n' $cg $cg >/job/in-step-ns
chmod 755 /job/in-step /job/in-step-ns
cd /job/hid
check hidden_status /job/in-step headroom status --json
check hidden /job/in-step headroom run --run-id hidden --jobserver --explain -- make -j4
cat $cg/builder/memory.events >"$out/hidden.events"
cd /job

# The host's own memory squeezes the build (no cgroup limit): four jobs of
# 700 MiB, half compressible, on 971 MiB with zram and a swap file.
# Governed first (make -j4 under run --jobserver), then plain make -j4.
squeeze_project /job/sq 700
cd /job/sq
check gov headroom run --run-id gov --jobserver -- make -j4
make -s clean 2>/dev/null; rm -f ./*.o
facts plain_before
check plain timeout 600 headroom run --run-id plain -- make -j4
facts plain_after
cd /job
