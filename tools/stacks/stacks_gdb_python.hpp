// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks`: the Python frames of a CPython process read by gdb through the
// interpreter's own gdb extension (python3.X-gdb.py: Debian's python3-dbg, pyenv), the frames
// py-bt prints, but taken from each thread's interpreter state instead of the C stack.
#pragma once

#include <string>

namespace sddp::stacks {

// A gdb command (`python exec(...)`) that prints, for each Python thread of the inferior, a
// line "Thread N (Python thread ID):" (the main thread first) and one `  File "F", line L, in
// FUNC` line per frame, innermost first: what parse_gdb_python reads. py-bt itself walks the C
// stack, which gdb can only unwind through libraries whose symbols it loaded, and loading
// PyTorch's takes it 15 s and more; the interpreter's thread states need libpython's alone.
// CPython 3.8 to 3.13 (tstate->frame, cframe->current_frame, current_frame).
std::string gdb_python_frames_command();

}  // namespace sddp::stacks
