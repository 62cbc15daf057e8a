/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the helpers print: one line each, starting with SAY_PREFIX (which the
 * including file defines).  A line goes to the kernel's log as one record, so
 * the serial console prints it whole: a write to the console's tty and a
 * kernel message printed meanwhile interleave character by character.  The
 * log is opened for each line (/dev/kmsg rate-limits per open file); when it
 * cannot be written the line goes to stdout, flushed at once.
 */
#ifndef DMALAB_HELPERS_SAY_H
#define DMALAB_HELPERS_SAY_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	int saved = errno, n, fd;
	va_list ap;

	n = snprintf(buf, sizeof(buf), "%s", SAY_PREFIX);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	buf[n] = '\0';
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, n) != n) {
		fputs(buf, stdout);
		fflush(stdout);
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
}

/* What failed and errno's text; returns the exit status 1. */
static int fail(const char *what)
{
	say("%s: %s", what, strerror(errno));
	return 1;
}

#endif
