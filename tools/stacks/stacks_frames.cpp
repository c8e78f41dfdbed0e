// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_frames.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <utility>

namespace sddp::stacks {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        out.push_back(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool starts_with(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

std::string_view basename_of(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The quoted thread name at the end of a header line, if any.
std::string thread_line(std::string_view header) {
    const auto close = header.rfind('"');
    if (close == std::string_view::npos || close == 0) return "thread";
    const auto open = header.rfind('"', close - 1);
    if (open == std::string_view::npos) return "thread";
    return "thread \"" + std::string(header.substr(open + 1, close - open - 1)) + "\"";
}

// "#12  " at the start of a frame line: the rest of the line, or nullopt-like empty view.
bool strip_frame_number(std::string_view& line) {
    line = trim(line);
    if (line.size() < 2 || line[0] != '#' || !std::isdigit(static_cast<unsigned char>(line[1])))
        return false;
    std::size_t i = 1;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    line = trim(line.substr(i));
    return true;
}

bool is_hex_address(std::string_view s) {
    if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
    return std::all_of(s.begin() + 2, s.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// "func (args) at /src/file.c:42" / "0x7f.. in func (args) from /lib/libc.so.6" -> "func
// (file.c:42)"
std::string gdb_frame(std::string_view rest) {
    if (const auto in = rest.find(" in ");
        in != std::string_view::npos && is_hex_address(rest.substr(0, in))) {
        rest = trim(rest.substr(in + 4));
    }
    std::string where;
    if (const auto at = rest.rfind(" at "); at != std::string_view::npos) {
        where = std::string(basename_of(trim(rest.substr(at + 4))));
        rest = rest.substr(0, at);
    } else if (const auto from = rest.rfind(" from "); from != std::string_view::npos) {
        where = std::string(basename_of(trim(rest.substr(from + 6))));
        rest = rest.substr(0, from);
    }
    rest = trim(rest);
    // Drop the argument list: the last balanced (...) group, whose values differ per process.
    if (!rest.empty() && rest.back() == ')') {
        int depth = 0;
        for (std::size_t i = rest.size(); i-- > 0;) {
            if (rest[i] == ')') ++depth;
            if (rest[i] == '(' && --depth == 0) {
                rest = trim(rest.substr(0, i));
                break;
            }
        }
    }
    std::string out = rest.empty() ? std::string("??") : std::string(rest);
    if (!where.empty()) out += " (" + where + ")";
    return out;
}

}  // namespace

std::vector<std::string> parse_pyspy_dump(std::string_view text) {
    std::vector<std::string> out;
    for (const auto raw : lines_of(text)) {
        if (starts_with(raw, "Thread ")) {
            out.push_back(thread_line(raw));
        } else if (!out.empty() && starts_with(raw, "    ") && !starts_with(raw, "        ")) {
            const auto frame = trim(raw);
            if (!frame.empty()) out.emplace_back("    " + std::string(frame));
        }
    }
    return out;
}

std::vector<std::string> parse_gdb_backtrace(std::string_view text) {
    // gdb prints the highest thread number first; the main thread (1) reads better first.
    std::map<long, std::vector<std::string>> threads;
    long current = 0;
    bool in_thread = false;
    for (const auto raw : lines_of(text)) {
        std::string_view line = raw;
        if (starts_with(line, "Thread ") && line.size() > 7 &&
            std::isdigit(static_cast<unsigned char>(line[7]))) {
            current = std::strtol(std::string(line.substr(7, 12)).c_str(), nullptr, 10);
            threads[current] = {thread_line(line.substr(0, line.rfind(')') + 1))};
            in_thread = true;
            continue;
        }
        if (!strip_frame_number(line)) continue;
        if (!in_thread) {  // a lone `bt` without thread headers
            in_thread = true;
            threads[current] = {"thread"};
        }
        threads[current].push_back("    " + gdb_frame(line));
    }
    std::vector<std::string> out;
    for (auto& [n, frames] : threads) {
        for (auto& f : frames) out.push_back(std::move(f));
    }
    return out;
}

std::vector<std::string> parse_gdb_python(std::string_view text) {
    std::map<long, std::vector<std::string>> threads;
    long current = 0;
    std::string header = "thread";
    const auto add = [&](std::string frame) {
        auto& frames = threads[current];
        if (frames.empty()) frames.push_back(header);
        frames.push_back("    " + std::move(frame));
    };
    for (const auto raw : lines_of(text)) {
        if (starts_with(raw, "Thread ") && raw.size() > 7 &&
            std::isdigit(static_cast<unsigned char>(raw[7]))) {
            current = std::strtol(std::string(raw.substr(7, 12)).c_str(), nullptr, 10);
            header = thread_line(raw.substr(0, raw.rfind(')') + 1));
            continue;
        }
        // `  File "/srv/train.py", line 14, in stuck_here`; source lines are indented deeper.
        if (!starts_with(raw, "  ") || starts_with(raw, "    ")) continue;
        const auto line = trim(raw);
        if (starts_with(line, "File \"")) {
            const auto close = line.find("\", line ");
            const auto in = line.rfind(", in ");
            if (close == std::string_view::npos || in == std::string_view::npos || in < close) {
                continue;
            }
            const auto file = basename_of(line.substr(6, close - 6));
            const auto number = line.substr(close + 8, in - close - 8);
            add(std::string(line.substr(in + 5)) + " (" + std::string(file) + ":" +
                std::string(number) + ")");
        } else if (line == "Waiting for the GIL") {
            add("(waiting for the GIL)");
        } else if (line == "Garbage-collecting") {
            add("(garbage collecting)");
        }
    }
    std::vector<std::string> out;
    for (auto& [n, frames] : threads) {
        for (auto& f : frames) out.push_back(std::move(f));
    }
    return out;
}

std::vector<std::string> parse_eu_stack(std::string_view text) {
    std::vector<std::string> out;
    for (const auto raw : lines_of(text)) {
        std::string_view line = raw;
        if (starts_with(line, "TID ")) {
            out.emplace_back("thread");
            continue;
        }
        if (!strip_frame_number(line)) continue;
        // "0x00007f.. name" or "0x00007f.. name - /path/module" (-m).
        const auto space = line.find(' ');
        std::string_view name =
            space == std::string_view::npos ? std::string_view() : trim(line.substr(space + 1));
        if (const auto dash = name.find(" - "); dash != std::string_view::npos) {
            name = trim(name.substr(0, dash));
        }
        if (out.empty()) out.emplace_back("thread");
        out.push_back("    " + (name.empty() ? std::string("??") : std::string(name)));
    }
    return out;
}

std::vector<std::string> parse_tool_output(std::string_view tool, std::string_view text) {
    if (tool == "py-spy") return parse_pyspy_dump(text);
    if (tool == "gdb py-bt") return parse_gdb_python(text);
    if (tool == "gdb") return parse_gdb_backtrace(text);
    if (tool == "eu-stack") return parse_eu_stack(text);
    return {};
}

std::string describe_tool_failure(std::string_view tool, int exit_status, std::string_view output,
                                  std::string_view ptrace_scope, int timeout_s) {
    const std::string name(tool);
    if (exit_status == -1) {
        return name + " did not finish within " + std::to_string(timeout_s) +
               " s (a process in uninterruptible sleep, or a slow symbol load); give more time "
               "with --timeout=SECONDS";
    }
    const bool refused = output.find("Operation not permitted") != std::string_view::npos ||
                         output.find("Permission denied") != std::string_view::npos ||
                         output.find("ptrace_scope") != std::string_view::npos;
    if (refused) {
        std::string why = "cannot attach with " + name +
                          ": ptrace was refused; run slurm-ddp stacks as the job's user or root";
        if (!ptrace_scope.empty()) {
            why += "; kernel.yama.ptrace_scope is " + std::string(ptrace_scope) +
                   " on this node (0 lets a user attach to its own processes, 1 only to its "
                   "children: ask the admin for 0, or for CAP_SYS_PTRACE; 2 needs root, 3 "
                   "forbids it)";
        }
        return why;
    }
    if (output.find("No such process") != std::string_view::npos) {
        return "the process exited before " + name + " could attach";
    }
    std::string last;
    for (const auto l : lines_of(output)) {
        if (!trim(l).empty()) last = std::string(trim(l));
    }
    if (last.size() > 300) last.replace(300, std::string::npos, "...");
    return name + " failed (exit status " + std::to_string(exit_status) + ")" +
           (last.empty() ? std::string() : ": " + last);
}

}  // namespace sddp::stacks
