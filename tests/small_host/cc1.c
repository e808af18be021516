/* A stand-in for a compiler on the small host (tests/small_host.rs): a
 * job that grows to MIB MiB, as cc1 does while it compiles, holds it for
 * a second and exits. Each page is half pseudo-random, half zero, so zram
 * stores it at about 2:1, like a compiler's heap. Installed as `cc1` (a
 * compiler headroom counts) and as `memhog` (a process that is not one).
 *   cc1 MIB [FILE...]   FILE is only a name for the job (its key).
 * STEP_MS=N in the environment: a pause of N ms after each 16 MiB (a job
 * that grows over seconds, as a compiler does, not at memory speed). */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  size_t mib = strtoul(argv[1], 0, 10), len = mib << 20, i;
  const char *step = getenv("STEP_MS");
  useconds_t pause = step ? (useconds_t)strtoul(step, 0, 10) * 1000 : 0;
  uint64_t *p = malloc(len), x = 88172645463325252ull ^ (uint64_t)getpid();
  if (!p) return 1;
  for (i = 0; i < len / 8; i++) {
    if ((i & 511) < 256) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; p[i] = x; }
    else p[i] = 0;
    if (pause && (i & ((16 << 17) - 1)) == 0) usleep(pause);
  }
  sleep(1);
  return (int)(p[len / 16] & 0); /* keeps the pages live to the end */
}
