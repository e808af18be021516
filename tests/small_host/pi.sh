# The stock Raspberry Pi kernel's boot (cgroup_disable=memory psi=0: no
# memory controller, no PSI), 1 GiB with zram and a swap file: the checks
# tests/small_host.rs reads back. Run as root by ci/small-host.
. /job/common.sh

facts status
check status headroom status
check status_json headroom status --json

# run as root: no memory controller, so the build is its process tree.
check root headroom run --run-id root -- cat /proc/self/cgroup

# The governor on the process tree, the host's own memory squeezing it:
# four jobs of 700 MiB under make -j4.
squeeze_project /job/sq 700
cd /job/sq
facts gov_before
check gov headroom run --run-id gov --jobserver -- make -j4
facts gov_after
cd /job
