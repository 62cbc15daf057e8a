// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmalab-cow: the userspace half of dmalab_exercise mode=cow, NET_DMA's
 * fork/copy-on-write race.  For each way of taking the page (get_user_pages,
 * then pin_user_pages): the module starts a DMA into a page of ours whose data
 * phase the fault plan holds; we fork, and write to the same page while the
 * child still shares it; then the module reports whether our page got the
 * DMA's data.  The module prints the KTAP results; this program only makes
 * the moves, and exits non-zero if one of them fails.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../module/race_uapi.h"

static int fail(const char *what)
{
	fprintf(stderr, "dmalab-cow: %s: %s\n", what, strerror(errno));
	return 1;
}

static int round_trip(int fd, unsigned char *page, unsigned int pin)
{
	struct dlx_cow_start start = { .uaddr = (uintptr_t)page, .pin = pin };
	int go[2];
	pid_t child;
	char c = 0;
	int status;

	memset(page, 'P', DLX_COW_LEN);
	if (pipe(go))
		return fail("pipe");
	if (ioctl(fd, DLX_IOC_COW_START, &start))
		return fail("start");
	child = fork();
	if (child < 0)
		return fail("fork");
	if (child == 0) {
		/* Keep sharing the page until the parent is done. */
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	/* The write that makes copy-on-write pick who keeps which page. */
	memset(page, 'W', DLX_COW_DMA_OFF);
	if (ioctl(fd, DLX_IOC_COW_WAIT))
		return fail("wait");
	if (ioctl(fd, DLX_IOC_COW_CHECK, (uint64_t)(uintptr_t)page))
		return fail("check");
	if (write(go[1], &c, 1) != 1)
		return fail("release the child");
	close(go[1]);
	if (waitpid(child, &status, 0) != child)
		return fail("waitpid");
	return 0;
}

int main(void)
{
	unsigned char *page;
	int fd, bad = 0;

	fd = open(DLX_RACE_DEVICE, O_RDWR);
	if (fd < 0)
		return fail("open " DLX_RACE_DEVICE);
	page = mmap(NULL, DLX_COW_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return fail("mmap");
	bad |= round_trip(fd, page, 0);
	bad |= round_trip(fd, page, 1);
	if (ioctl(fd, DLX_IOC_FINISH))
		bad |= fail("finish");
	close(fd);
	return bad;
}
