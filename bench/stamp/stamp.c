/*
 * stamp.c is the start-lateness benchmark's job in C: it reads the clock
 * as the first act of main, before anything else costs time, and appends
 * one line to the file named by its argument:
 *
 *     SLOT NOW_UNIX_NANOS JOB
 *
 * SLOT is $CRONVISOR_SCHEDULED_AT as given (RFC 3339), or "-" when it is
 * unset (a scheduler that does not set it: the reader infers the slot).
 * JOB is the optional second argument, else $CRONVISOR_JOB: a command
 * line can name its job the same way under any scheduler. Built static, its
 * reading comes about 0.3 ms after execve(2) on the benchmark VM (glibc's
 * start-up), where the Go stamp (bench/cmd/stamp) adds its runtime's
 * start-up, about 1 ms, and stamp_x86_64.c, without a C library, a few
 * microseconds. bench/run.sh builds one of them (STAMP=raw|libc|go).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (argc != 2 && argc != 3) {
		fputs("usage: stamp FILE [JOB]\n", stderr);
		return 2;
	}
	const char *slot = getenv("CRONVISOR_SCHEDULED_AT");
	if (slot == NULL || *slot == '\0')
		slot = "-";
	const char *job = argc == 3 ? argv[2] : getenv("CRONVISOR_JOB");
	char line[512];
	int n = snprintf(line, sizeof line, "%s %lld %s\n", slot,
	                 (long long)now.tv_sec * 1000000000LL + now.tv_nsec, job ? job : "");
	if (n < 0 || n >= (int)sizeof line) {
		fputs("stamp: line too long\n", stderr);
		return 2;
	}
	/* One write(2) with O_APPEND: concurrent stamps never interleave. */
	int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n || close(fd) != 0) {
		perror("stamp");
		return 1;
	}
	return 0;
}
