// SPDX-License-Identifier: Apache-2.0
// --ddp=requeue's markers on the node (names and rules: core/task/requeue_marker.hpp). Only
// slurmstepd (root) reads or writes them, in a directory that is root's alone.
#pragma once

#include <cstdint>

#include "core/base/result.hpp"
#include "core/task/requeue_marker.hpp"

namespace sddp::plugin {

// Records that `marker`'s run got its early signal on this node; earlier runs' markers of the
// job on this node go. Creates kRequeueMarkerDir (0700) when missing.
Status write_requeue_marker(const RequeueMarker& marker);

// Whether `marker` is there as this code writes it (a regular file of root's, one link, in a
// directory only root can write); every marker of the job on this node is removed either way.
// Errors say why a marker that is there cannot be trusted.
Result<bool> take_requeue_marker(const RequeueMarker& marker);

}  // namespace sddp::plugin
