// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_gdb_python.hpp"

namespace sddp::stacks {
namespace {

// Runs inside gdb, beside the extension's PyFramePtr (3.11+) and PyFrameObjectPtr (3.10 and
// older). Thread states are linked newest first. Frames owned by the C stack (owner 3, 3.12+)
// are the interpreter's own entry shims, not the program's.
constexpr const char* kWalker = R"PY(def _sddp_python_stacks():
    try:
        interp = gdb.parse_and_eval("_PyRuntime")["interpreters"]["head"]
    except gdb.error as e:
        print("SDDP: no interpreter state: %s" % e)
        return
    states = []
    while int(interp) != 0:
        fields = [f.name for f in interp.dereference().type.fields()]
        ts = interp["threads"]["head"] if "threads" in fields else interp["tstate_head"]
        while int(ts) != 0:
            states.append(ts)
            ts = ts["next"]
        interp = interp["next"]
    for n, ts in enumerate(reversed(states), 1):
        print("Thread %d (Python thread %d):" % (n, int(ts["thread_id"])))
        names = [f.name for f in ts.dereference().type.fields()]
        frames = None
        if "current_frame" in names:
            frames = ts["current_frame"]
        elif "cframe" in names:
            cframe = ts["cframe"]
            if "current_frame" in [f.name for f in cframe.dereference().type.fields()]:
                frames = cframe["current_frame"]
        if frames is not None:
            f = frames
            depth = 0
            while int(f) != 0 and depth < 2000:
                if int(f["owner"]) != 3:
                    PyFramePtr(f).print_traceback()
                f = f["previous"]
                depth += 1
        elif "frame" in names:
            f = ts["frame"]
            depth = 0
            while int(f) != 0 and depth < 2000:
                PyFrameObjectPtr.from_pyobject_ptr(f).print_traceback()
                f = f["f_back"]
                depth += 1
_sddp_python_stacks()
)PY";

}  // namespace

std::string gdb_python_frames_command() {
    std::string escaped;
    for (const char c : std::string(kWalker)) {
        if (c == '\\' || c == '"') escaped += '\\';
        if (c == '\n') {
            escaped += "\\n";
        } else {
            escaped += c;
        }
    }
    return "python exec(\"" + escaped + "\")";
}

}  // namespace sddp::stacks
