/*
 * The floor of a live `headroom record --interval 0` tick: the same system
 * calls made the same way, and nothing else (no parsing, no formatting),
 * so that ci/bench can print headroom's per-tick CPU as a ratio to it.
 *
 *   floor TICKS CSV [--kept PATH...] [--records PATH...] [--statfs DIR...]
 *         [--list DIR] [--proc DIR]
 *
 * Opened once: every --kept and --records file (O_RDONLY), every --statfs
 * directory (O_PATH), the --list and --proc directories, and CSV (created,
 * truncated, O_APPEND). Then TICKS times, in this order:
 *   - each --kept file: one pread(fd, buf, 0) (a single-record seq_file or
 *     sysfs text, regenerated at offset 0);
 *   - each --records file: pread at 0, then at the offset read so far until
 *     it returns 0 (a multi-record seq_file: /proc/vmstat);
 *   - the --list directory: lseek(0) and getdents64 until 0 (/sys/block);
 *   - each --statfs directory: fstatfs;
 *   - the --proc directory: lseek(0) and getdents64 until 0, and for each
 *     numeric entry openat(PID/comm) + read + close; for a comm on
 *     headroom's default compiler list, PID/stat and PID/status the same way
 *     (a PID gone meanwhile is skipped). As headroom does on the live root
 *     (build::compilers::Classes), a process is remembered by PID and the
 *     inode getdents64 gives its directory, in two tables of 512 in listing
 *     order walked side by side: a kernel thread of the last listing is
 *     skipped (nothing read), a user process has its comm read; one not
 *     in the last listing (new, or its PID reused) has its stat read too
 *     to learn which it is (PF_KTHREAD in field 9), while there is room;
 *   - a 200-byte row: fstat(CSV), fallocate(KEEP_SIZE) at its end, write.
 * Buffers: 64 KiB for the fixed files (headroom's largest, /proc/stat's),
 * 16 KiB for a process's files and 8 KiB for a listing (headroom's). Exit 0, or 1 with one line on
 * stderr when a file cannot be opened or read; 2 on a usage error.
 *
 * Built by ci/bench: cc -O2 [-static] -o floor ci/floor.c
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_FILES 256
#define RDFLAGS (O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
#define CLASSIFIED 512
#define PF_KTHREAD 0x00200000UL

struct list {
	int fd[MAX_FILES];
	int n;
};

/* A process of a listing: PID, the low 32 bits of its inode, its class. */
struct seen {
	unsigned pid, ino;
	int kernel_thread;
};

/* The last listing's table and this one's, by turns; the walk's cursor. */
static struct seen tables[2][CLASSIFIED];
static int counts[2], last, cursor;

static char fixed_buf[64 * 1024];
static char proc_buf[16 * 1024];
static char dents[8 * 1024];

static void die(const char *what, const char *path)
{
	fprintf(stderr, "floor: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fputs("usage: floor TICKS CSV [--kept PATH...] [--records PATH...] "
	      "[--statfs DIR...] [--list DIR] [--proc DIR]\n", stderr);
	exit(2);
}

static void add(struct list *l, const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		die("cannot open", path);
	if (l->n == MAX_FILES)
		usage();
	l->fd[l->n++] = fd;
}

/* headroom's default list: whole names, clang-<digits>, clang++-<digits>,
 * ld.<anything> (src/followed/compilers.rs). */
static int digits_after(const char *comm, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p = comm + n;

	if (strncmp(comm, prefix, n) != 0 || *p == '\0')
		return 0;
	for (; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

static int is_compiler(const char *comm)
{
	static const char *const exact[] = {
		"cc1", "cc1plus", "cc1obj", "cc1objplus", "lto1", "f951",
		"gnat1", "rustc", "clang", "clang++", "ld", "lld", "mold",
		"cicc", "ptxas", "javac", "go", "compile",
	};
	size_t i;

	for (i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (strcmp(comm, exact[i]) == 0)
			return 1;
	return digits_after(comm, "clang-") || digits_after(comm, "clang++-") ||
	       (strncmp(comm, "ld.", 3) == 0 && comm[3] != '\0');
}

/* openat(dir, "PID/NAME") + read + close; the bytes read, or -1. */
static ssize_t read_pid_file(int dir, const char *pid, const char *name)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "%s/%s", pid, name);
	fd = openat(dir, path, RDFLAGS);
	if (fd < 0)
		return -1;
	n = read(fd, proc_buf, sizeof proc_buf);
	close(fd);
	return n;
}

/* Appends to this listing's table while it keeps PID order and has room. */
static void push(struct seen s)
{
	int next = 1 - last;

	if (counts[next] < CLASSIFIED &&
	    (counts[next] == 0 || tables[next][counts[next] - 1].pid < s.pid))
		tables[next][counts[next]++] = s;
}

/* The last listing's entry for pid and ino (carried into this one's), or
 * NULL. */
static const struct seen *lookup(unsigned pid, unsigned ino)
{
	const struct seen *t = tables[last];

	while (cursor < counts[last] && t[cursor].pid < pid)
		cursor++;
	if (cursor == counts[last] || t[cursor].pid != pid || t[cursor].ino != ino)
		return NULL;
	push(t[cursor]);
	return &t[cursor];
}

/* Reads PID/stat into proc_buf; 1 for a kernel thread, 0 for not, -1 when
 * it cannot be read. Only when a process is learnt, not every tick. */
static int stat_kernel_thread(int dir, const char *pid)
{
	ssize_t n = read_pid_file(dir, pid, "stat");
	char *p;
	int field;

	if (n <= 0)
		return -1;
	proc_buf[n] = '\0';
	p = strrchr(proc_buf, ')');
	for (field = 2; p != NULL && field < 9; field++)
		p = strchr(p + 1, ' ');
	return p != NULL && (strtoul(p + 1, NULL, 10) & PF_KTHREAD) != 0;
}

static void scan_process(int dir, const char *pid, unsigned ino)
{
	unsigned id = (unsigned)strtoul(pid, NULL, 10);
	const struct seen *known = lookup(id, ino);
	int learn = known == NULL && counts[1 - last] < CLASSIFIED, k = -1;
	ssize_t n;

	if (known != NULL && known->kernel_thread)
		return;
	n = read_pid_file(dir, pid, "comm");
	if (n <= 0)
		return;
	if (proc_buf[n - 1] == '\n')
		n--;
	proc_buf[n] = '\0';
	if (!is_compiler(proc_buf)) {
		if (learn)
			k = stat_kernel_thread(dir, pid);
	} else {
		k = stat_kernel_thread(dir, pid);
		if (k == 0)
			read_pid_file(dir, pid, "status");
	}
	if (learn && k >= 0)
		push((struct seen){ .pid = id, .ino = ino, .kernel_thread = k });
}

/* lseek(0) + getdents64 until 0; each numeric entry scanned when `procs`. */
static void list_dir(int dir, int procs)
{
	long n;

	if (procs) {
		cursor = 0;
		counts[1 - last] = 0;
	}
	lseek(dir, 0, SEEK_SET);
	while ((n = syscall(SYS_getdents64, dir, dents, sizeof dents)) > 0) {
		long off = 0;

		while (off < n) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);

			off += d->d_reclen;
			if (procs && isdigit((unsigned char)d->d_name[0]))
				scan_process(dir, d->d_name, (unsigned)d->d_ino);
		}
	}
	if (procs)
		last = 1 - last;
}

int main(int argc, char **argv)
{
	struct list kept = { .n = 0 }, records = { .n = 0 }, statfs_dirs = { .n = 0 };
	struct list *into = NULL;
	int flags = 0, list = -1, proc = -1, csv, i;
	long ticks, t;
	char row[200];
	struct statfs sf;
	struct stat st;

	if (argc < 3)
		usage();
	ticks = strtol(argv[1], NULL, 10);
	csv = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (csv < 0)
		die("cannot create", argv[2]);
	for (i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--kept") == 0) {
			into = &kept, flags = RDFLAGS;
		} else if (strcmp(argv[i], "--records") == 0) {
			into = &records, flags = RDFLAGS;
		} else if (strcmp(argv[i], "--statfs") == 0) {
			into = &statfs_dirs, flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
		} else if (strcmp(argv[i], "--list") == 0 && i + 1 < argc) {
			list = open(argv[++i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (list < 0)
				die("cannot open", argv[i]);
			into = NULL;
		} else if (strcmp(argv[i], "--proc") == 0 && i + 1 < argc) {
			proc = open(argv[++i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (proc < 0)
				die("cannot open", argv[i]);
			into = NULL;
		} else if (into != NULL && argv[i][0] != '-') {
			add(into, argv[i], flags);
		} else {
			usage();
		}
	}
	memset(row, 'x', sizeof row);
	row[sizeof row - 1] = '\n';

	for (t = 0; t < ticks; t++) {
		for (i = 0; i < kept.n; i++)
			if (pread(kept.fd[i], fixed_buf, sizeof fixed_buf, 0) < 0)
				die("cannot read", "a --kept file");
		for (i = 0; i < records.n; i++) {
			off_t off = 0;
			ssize_t n;

			while ((n = pread(records.fd[i], fixed_buf, sizeof fixed_buf, off)) > 0)
				off += n;
			if (n < 0)
				die("cannot read", "a --records file");
		}
		if (list >= 0)
			list_dir(list, 0);
		for (i = 0; i < statfs_dirs.n; i++)
			fstatfs(statfs_dirs.fd[i], &sf);
		if (proc >= 0)
			list_dir(proc, 1);
		if (syscall(SYS_fstat, csv, &st) < 0 ||
		    fallocate(csv, FALLOC_FL_KEEP_SIZE, st.st_size, sizeof row) < 0 ||
		    write(csv, row, sizeof row) != (ssize_t)sizeof row)
			die("cannot write", argv[2]);
	}
	return 0;
}
