// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab-dsa's faults (docs/faults.rst): which plan rules it accepts. The data path decides
// them when an engine starts a descriptor (dsa/src/faults.cc).
#pragma once

#include "dmalab/faults.h"

namespace dmalab::dsa
{

// What a dmalab-dsa with this many WQs accepts in a plan: "wq" selects the WQ a descriptor
// came through, "op" its operation, "fail" takes a completion "status".
faults::ModelSpec fault_spec(unsigned wqs);

} // namespace dmalab::dsa
