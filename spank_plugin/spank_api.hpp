// SPDX-License-Identifier: Apache-2.0
// spank.h for C++.
//
// spank.h declares the slurm_spank_* hooks outside its own extern "C" block, so it must be
// included inside one, or the hooks we define get C++ names Slurm cannot find.
#pragma once

extern "C" {
#include <slurm/spank.h>
}
