// SPDX-License-Identifier: Apache-2.0
#include "core/options/options_help.hpp"

#include <algorithm>

#include "core/options/options.hpp"

namespace sddp {
namespace {

std::string item_syntax(const OptionSpec& o) {
    std::string s(o.name);
    if (o.syntax.empty()) return s;
    // debug and other flag-like rows with a value take it optionally.
    if (o.type == OptionType::flag_or_path) return s + "[=" + std::string(o.syntax) + "]";
    return s + "=" + std::string(o.syntax);
}

std::string pad(std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s + "  ";
}

std::string scope_mark(const OptionSpec& o) {
    switch (o.scope) {
        case OptionScope::site:
            return " [site only: plugstack.conf]";
        case OptionScope::user:
            return " [--ddp only]";
        case OptionScope::both:
            break;
    }
    return "";
}

std::string join_variables(const OptionSpec& o) {
    std::string out;
    for (const auto v : o.variables) out += (out.empty() ? "" : ", ") + std::string(v);
    return out;
}

// What values a row accepts, from its declaration: a range for numbers and ports, the choices.
std::string accepted_values(const OptionSpec& o) {
    switch (o.type) {
        case OptionType::number:
            return std::to_string(o.min) + "-" + std::to_string(o.max);
        case OptionType::port:
            return "1024-65535";
        case OptionType::port_range:
            return "LO-HI within 1024-65535";
        case OptionType::choice: {
            std::string out;
            for (const auto c : o.choices) out += (out.empty() ? "" : "|") + std::string(c);
            return out;
        }
        case OptionType::flag:
            return o.value_required ? "yes|no" : "yes|no (alone: yes)";
        case OptionType::flag_or_path:
            return "yes|no|DIR";
        case OptionType::host:
            return "host name or address";
        case OptionType::set_value:
            break;
    }
    return "";
}

// One conflict in words: "`off` with any other key".
std::string conflict_words(const OptionConflict& c) {
    std::string second(c.second);
    if (second == "*") return "`" + std::string(c.first) + "` with any other key";
    if (second.starts_with("!")) {
        return "`" + std::string(c.first) + "` without `" + second.substr(1) + "`";
    }
    return "`" + std::string(c.first) + "` with `" + second + "`";
}

std::string md_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

std::string format_options_help(HelpFormat format) {
    std::string out;
    if (format == HelpFormat::names) {
        for (const auto& o : option_table()) out += std::string(o.name) + "\n";
        return out;
    }
    if (format == HelpFormat::markdown) {
        out += "| option | values | default | meaning | sets |\n|---|---|---|---|---|\n";
        for (const auto& o : option_table()) {
            std::string meaning(o.help);
            if (!o.alias_of.empty()) meaning = "the same as `" + std::string(o.alias_of) + "`";
            meaning += scope_mark(o);
            out += "| `" + md_escape(item_syntax(o)) + "` | " + md_escape(accepted_values(o)) +
                   " | " + md_escape(option_default_text(o)) + " | " + md_escape(meaning) + " | " +
                   md_escape(join_variables(o)) + " |\n";
        }
        out += "\nRefused together (srun, sbatch and salloc stop before anything runs):\n\n";
        for (const auto& c : option_conflicts()) {
            out += "- " + conflict_words(c) + ": " + md_escape(c.message) + "\n";
        }
        return out;
    }
    std::size_t w_item = 6;
    std::size_t w_default = 7;
    for (const auto& o : option_table()) {
        w_item = std::max(w_item, item_syntax(o).size());
        w_default = std::max(w_default, option_default_text(o).size());
    }
    out +=
        "--ddp[=OPTION,...]: comma-separated options (srun, sbatch, salloc; plugin arguments in "
        "plugstack.conf use the same keys)\n";
    out += "  " + pad("OPTION", w_item) + pad("DEFAULT", w_default) + "MEANING\n";
    for (const auto& o : option_table()) {
        out += "  " + pad(item_syntax(o), w_item) + pad(option_default_text(o), w_default) +
               std::string(o.help) + scope_mark(o) + "\n";
        if (!o.variables.empty()) {
            out += "  " + std::string(w_item + w_default + 4, ' ') + "sets " + join_variables(o) +
                   "\n";
        }
    }
    out += "Refused:";
    for (const auto& c : option_conflicts()) {
        std::string second(c.second);
        if (second == "*") {
            second = " with any other key";
        } else if (second.starts_with("!")) {
            second = " without " + second.substr(1);
        } else {
            second = " with " + second;
        }
        out += " " + std::string(c.first) + second + ";";
    }
    out += "\nSee man spank_ddp(8).\n";
    return out;
}

std::string format_option_usage() {
    std::string items;
    for (const auto& o : option_table()) {
        if (o.scope == OptionScope::site || !o.alias_of.empty()) continue;
        items += (items.empty() ? "" : ", ") + item_syntax(o);
    }
    return "Run the step as a distributed data-parallel job: sets RANK, WORLD_SIZE, MASTER_ADDR, "
           "MASTER_PORT, LOCAL_RANK... per task (opts: " +
           items + "; --ddp=help explains them)";
}

bool is_help_request(std::string_view optarg) {
    while (!optarg.empty() && optarg.front() == ' ') optarg.remove_prefix(1);
    while (!optarg.empty() && optarg.back() == ' ') optarg.remove_suffix(1);
    return optarg == "help";
}

}  // namespace sddp
