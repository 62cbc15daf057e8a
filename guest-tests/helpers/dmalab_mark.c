// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmalab-mark open ID | close OPS: opens or closes an instruction-profile
 * window from userspace, for the workloads /init drives itself (init.sh's
 * pktgen windows).  The markers are the exerciser's (dlx_profile_mark in
 * module/exercise.h, docs/profile.rst): xchg %bx,%bx with the window's id in
 * %rax opens one, xchg %cx,%cx with the operations it covered in %rax closes
 * it.  Neither changes a register, a flag or memory: without the TCG plugin
 * libdmalab-profile.so (or on hardware) this program does nothing.  ID and OPS
 * are numbers as strtoul reads them (0x... for hex).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "usage: dmalab-mark open ID | close OPS\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long v;
	char *end;

	if (argc != 3 || (strcmp(argv[1], "open") && strcmp(argv[1], "close")))
		return usage();
	errno = 0;
	v = strtoul(argv[2], &end, 0);
	if (!*argv[2] || *end || errno)
		return usage();
	if (!strcmp(argv[1], "open"))
		__asm__ volatile("xchg %%bx, %%bx" : : "a"(v) : "memory");
	else
		__asm__ volatile("xchg %%cx, %%cx" : : "a"(v) : "memory");
	return 0;
}
