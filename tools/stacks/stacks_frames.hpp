// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks`: the output of py-spy, gdb and eu-stack turned into comparable frames.
//
// Two ranks stuck in the same place must give the same frames, so everything that differs
// between processes for no reason of the program's is dropped: addresses (ASLR), thread and
// process ids, argument values, thread states (idle/active), directories of source files.
// What is left: one `thread "NAME"` line per thread (or `thread`), then `FUNCTION (FILE:LINE)`
// per frame, innermost first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sddp::stacks {

// `py-spy dump --pid P`: Python frames of every Python thread.
std::vector<std::string> parse_pyspy_dump(std::string_view text);

// `gdb -batch -ex "thread apply all bt"`: native frames; threads in gdb's numbering, 1 first.
std::vector<std::string> parse_gdb_backtrace(std::string_view text);

// `gdb -batch -ex "thread apply all py-bt"` (the interpreter's gdb extension): the Python frames
// of every thread that has some, as `FUNCTION (FILE:LINE)` like py-spy's; calls into built-in
// functions (whose lines carry object addresses) are left out, as py-spy does.
std::vector<std::string> parse_gdb_python(std::string_view text);

// `eu-stack -p P`: native frames (function names; no source lines without -s).
std::vector<std::string> parse_eu_stack(std::string_view text);

// The frames of `tool`'s output ("py-spy", "gdb py-bt", "gdb", "eu-stack"); empty for an
// unknown tool.
std::vector<std::string> parse_tool_output(std::string_view tool, std::string_view text);

// Why `tool` gave no stack for a process, with the fix: a refused ptrace (names
// kernel.yama.ptrace_scope with its value `ptrace_scope`, "" when the file is absent) or the
// tool's own last words. `exit_status` is the tool's, or -1 when it was killed at its timeout.
std::string describe_tool_failure(std::string_view tool, int exit_status, std::string_view output,
                                  std::string_view ptrace_scope, int timeout_s);

}  // namespace sddp::stacks
