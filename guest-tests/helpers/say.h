/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the helpers print: one line each, starting with SAY_PREFIX (which the
 * including file defines), flushed at once so that the serial console keeps
 * it in order with the kernel's lines.
 */
#ifndef DMALAB_HELPERS_SAY_H
#define DMALAB_HELPERS_SAY_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs(SAY_PREFIX, stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* What failed and errno's text; returns the exit status 1. */
static int fail(const char *what)
{
	say("%s: %s", what, strerror(errno));
	return 1;
}

#endif
