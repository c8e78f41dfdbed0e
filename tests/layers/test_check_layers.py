#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_layers.py catches each kind of violation it promises, and passes a clean tree.

Each case writes a throw-away source tree in a temporary folder, runs the checker on it and
asserts the exit status and the file:line it names.
usage: test_check_layers.py [CHECKER]   (default: check_layers.py next to this file)
"""
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

CHECKER = Path(__file__).resolve().parent / "check_layers.py"

# A small tree that respects every rule, including the spellings a naive checker would flag:
# relative includes within a layer and downwards, a comment naming a SLURM_DDP_ variable,
# and "//" or a quote inside string and character literals.
CLEAN = {
    "libbootstrap/src/core/contract/contract.hpp": """
        #pragma once
        inline constexpr const char* kSecret = "SLURM_" "DDP_SECRET";
        inline constexpr const char* kRank = "SLURM_DDP_RANK";
        """,
    "libbootstrap/src/core/base/result.hpp": """
        #pragma once
        #include <string>
        """,
    "libbootstrap/src/core/options/options.cpp": """
        #include "core/contract/contract.hpp"
        #include "./result.hpp"
        /* SLURM_DDP_SECRET is spelled in the contract only. */
        const char* url = "http://x"; // SLURM_DDP_RANK in a comment is fine
        const char q = '"';
        const long n = 1'000'000;
        """,
    "libbootstrap/src/os/process_env.cpp": """
        #include <cstdlib>
        #include "../core/base/result.hpp"
        #include "core/contract/contract.hpp"
        const char* read() { return std::getenv(kRank); }
        """,
    "libbootstrap/src/rendezvous/tcp_node.hpp": """
        #pragma once
        #include "os/../core/base/result.hpp"
        """,
    "libbootstrap/src/api/c_api.cpp": """
        #include "slurm_ddp/bootstrap.h"
        #include "../rendezvous/tcp_node.hpp"
        """,
    "libbootstrap/include/slurm_ddp/bootstrap.h": """
        #pragma once
        """,
    "spank_plugin/plugin.cpp": """
        #include "plugin_state.hpp"
        #include "rendezvous/tcp_node.hpp"
        """,
    "spank_plugin/plugin_state.hpp": """
        #pragma once
        """,
    "tools/main.cpp": """
        #include "slurm_ddp/bootstrap.h"
        #include "api/settings.hpp"
        """,
}


def write_tree(root, files):
    for rel, text in files.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def run_checker(files):
    with tempfile.TemporaryDirectory(prefix="check_layers_") as root:
        write_tree(root, files)
        done = subprocess.run([sys.executable, str(CHECKER), root], capture_output=True,
                              text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


class CheckLayers(unittest.TestCase):
    def assert_caught(self, rel, text, where, words):
        """The clean tree plus one file: the checker exits 1 and names where and why."""
        code, out = run_checker({**CLEAN, rel: text})
        self.assertEqual(code, 1, out)
        lines = [l for l in out.splitlines() if l.startswith(where + ":")]
        self.assertEqual(len(lines), 1, f"expected one problem at {where}:\n{out}")
        for w in words:
            self.assertIn(w, lines[0], out)
        self.assertIn("1 problem(s)", out)

    def test_clean_tree_passes(self):
        code, out = run_checker(CLEAN)
        self.assertEqual(code, 0, out)
        self.assertIn("0 problem(s)", out)

    def test_upward_include(self):
        self.assert_caught("libbootstrap/src/os/bad.cpp",
                           '#include "core/base/result.hpp"\n#include "rendezvous/tcp_node.hpp"\n',
                           "libbootstrap/src/os/bad.cpp:2", ["higher layer 'rendezvous'"])

    def test_relative_upward_include(self):
        self.assert_caught("libbootstrap/src/topology/bad.cpp",
                           '#include "core/base/result.hpp"\n#include "../rendezvous/tcp_node.hpp"\n',
                           "libbootstrap/src/topology/bad.cpp:2",
                           ["../rendezvous/tcp_node.hpp", "higher layer 'rendezvous'"])

    def test_dot_relative_include_climbing_layers(self):
        self.assert_caught("libbootstrap/src/core/bad.cpp",
                           '#include "./../api/c_api.hpp"\n',
                           "libbootstrap/src/core/bad.cpp:1", ["higher layer 'api'"])

    def test_relative_include_leaving_src(self):
        self.assert_caught("libbootstrap/src/core/bad.cpp",
                           '#include "../../include/slurm_ddp/bootstrap.h"\n',
                           "libbootstrap/src/core/bad.cpp:1", ["outside libbootstrap/src/"])

    def test_public_header_counts_as_api(self):
        self.assert_caught("spank_plugin/bad.cpp", '#include "slurm_ddp/bootstrap.h"\n',
                           "spank_plugin/bad.cpp:1", ["plugin", "higher layer 'api'"])

    def test_split_literal(self):
        self.assert_caught("libbootstrap/src/os/bad.cpp",
                           'const char* a = "SLURM_" "DDP_SECRET";\n',
                           "libbootstrap/src/os/bad.cpp:1", ["SLURM_DDP_"])

    def test_split_literal_at_the_prefix(self):
        self.assert_caught("tools/bad.cpp", 'auto b = std::string("SLURM_DDP" "_X");\n',
                           "tools/bad.cpp:1", ["SLURM_DDP_"])

    def test_split_literal_over_lines(self):
        self.assert_caught("spank_plugin/bad.cpp",
                           'const char* c = "SLURM_"   // wrapped\n    "DDP_RANK";\nint d;\n',
                           "spank_plugin/bad.cpp:1", ["SLURM_DDP_"])

    def test_core_getenv(self):
        self.assert_caught("libbootstrap/src/core/bad.cpp",
                           '#include <cstdlib>\n\nconst char* e = std::getenv("HOME");\n',
                           "libbootstrap/src/core/bad.cpp:3", ["getenv"])

    def test_protocol_folder_is_pure(self):
        self.assert_caught("libbootstrap/src/rendezvous/protocol/bad.cpp",
                           '#include "core/base/result.hpp"\n#include <sys/socket.h>\n',
                           "libbootstrap/src/rendezvous/protocol/bad.cpp:2", ["sys/socket.h"])

    def test_protocol_folder_includes_only_core_and_itself(self):
        self.assert_caught("libbootstrap/src/rendezvous/protocol/bad.cpp",
                           '#include "rendezvous/protocol/wire.hpp"\n'
                           '#include "../protocol/wire.hpp"\n#include "core/base/result.hpp"\n'
                           '#include "rendezvous/tcp_node.hpp"\n',
                           "libbootstrap/src/rendezvous/protocol/bad.cpp:4",
                           ["rendezvous/tcp_node.hpp", "pure"])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        CHECKER = Path(sys.argv.pop(1)).resolve()
    unittest.main(verbosity=2)
