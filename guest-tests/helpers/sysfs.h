/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the helpers do through sysfs: write a file, read one (a module's
 * parameter, say), and find the function a driver drives and take it from
 * the driver.  Static inline, so that a helper may include it and use only
 * some of it.  Include after say.h.
 */
#ifndef DMALAB_HELPERS_SYSFS_H
#define DMALAB_HELPERS_SYSFS_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Writes text to a sysfs file; 0 when it took all of it. */
static inline int sysfs_put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * The first line of a sysfs file, without its newline, into buf (len bytes,
 * the line cut short to fit): "?" when the file cannot be opened, "" when
 * it cannot be read.
 */
static inline void sysfs_get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	snprintf(buf, len, "?");
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	close(fd);
}

/*
 * The first function bound to driver, into bdf (len bytes), unbound from
 * it: 0, or -1 when there is none or the unbind failed (said).
 */
static inline int sysfs_take_first(const char *driver, char *bdf, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s", driver);
	d = opendir(path);
	bdf[0] = 0;
	while (d && (e = readdir(d)))
		if (strchr(e->d_name, ':') && strlen(e->d_name) < len) {
			memcpy(bdf, e->d_name, strlen(e->d_name) + 1);
			break;
		}
	if (d)
		closedir(d);
	if (!bdf[0]) {
		say("no function bound to %s", driver);
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/unbind", driver);
	if (sysfs_put(path, bdf)) {
		say("%s: could not unbind %s", driver, bdf);
		return -1;
	}
	return 0;
}

#endif
