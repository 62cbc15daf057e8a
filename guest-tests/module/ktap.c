// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise: the KTAP lines the host judges (guest-tests/harness/ktap.py).
 * A mode prints its plan with dlx_ktap_plan() and each result with
 * dlx_ktap_result(), which numbers the results itself; dlx_ktap_end() checks
 * that the results filled the plan exactly.
 */

#include <linux/kernel.h>
#include <linux/printk.h>

#include "exercise.h"

static unsigned int dlx_ktap_planned;	/* the plan's count, 0 before it */
static unsigned int dlx_ktap_done;	/* results printed so far */

/* "1..n": the results to come. */
void dlx_ktap_plan(unsigned int n)
{
	dlx_ktap_planned = n;
	dlx_ktap_done = 0;
	pr_info("1..%u\n", n);
}

/*
 * "ok N NAME" or "not ok N NAME", N the next result's number; fmt gives the
 * name, and may go on with " # " and a directive or a diagnostic.  Returns ok.
 */
bool dlx_ktap_result(bool ok, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("%sok %u %pV\n", ok ? "" : "not ", ++dlx_ktap_done, &vaf);
	va_end(args);
	return ok;
}

/* The plan's tests from the next result up to, not including, to: not ok, saying why. */
void dlx_ktap_not_ok_to(const char *const *tests, unsigned int to, const char *why)
{
	while (dlx_ktap_done < to)
		dlx_ktap_result(false, "%s # %s", tests[dlx_ktap_done], why);
}

/*
 * The end of the mode's results: a plan they did not fill exactly gets a
 * diagnostic and a "not ok" result, so that the judge fails the run.
 */
void dlx_ktap_end(void)
{
	if (dlx_ktap_planned && dlx_ktap_done == dlx_ktap_planned)
		return;
	pr_info("# %s: ktap: %u result(s) for the plan 1..%u\n", DLX_NAME,
		dlx_ktap_done, dlx_ktap_planned);
	dlx_ktap_result(false, "ktap-plan # the results do not match the plan");
}
