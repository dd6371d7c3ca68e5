/* SPDX-License-Identifier: BSD-3-Clause */
/* dpmonctl — the operator's client of dpmon's REST API. All logic lives in lib/ctl. */
#include "ctl.h"

int
main(int argc, char **argv)
{
	return ctl_main(argc, argv);
}
