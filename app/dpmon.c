/* SPDX-License-Identifier: BSD-3-Clause */
/* dpmon — the appliance. All logic lives in lib/ (lib/run). */
#include "run.h"

int
main(int argc, char **argv)
{
	return dpmon_main(argc, argv);
}
