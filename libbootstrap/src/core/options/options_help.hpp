// SPDX-License-Identifier: Apache-2.0
// The option table as text: `--ddp=help` in srun/sbatch/salloc, `slurm-ddp options` and its
// `--markdown` form (the README's and the man page's tables are checked against the same rows).
#pragma once

#include <string>
#include <string_view>

namespace sddp {

enum class HelpFormat { text, markdown, names };

// text: aligned columns (option, default, meaning, variables), site-only keys marked;
// markdown: a table; names: one canonical option name per line (aliases included).
std::string format_options_help(HelpFormat format);

// The --ddp option's usage line in `srun --help` (and sbatch, salloc): every option a user may
// give, from the option table, so that the line cannot fall behind the table.
std::string format_option_usage();

// `--ddp=help`: the value is exactly "help" (spaces around it ignored).
bool is_help_request(std::string_view optarg);

}  // namespace sddp
