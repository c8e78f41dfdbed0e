// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/task_counts.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "core/base/numbers.hpp"

namespace sddp {
namespace {

constexpr std::size_t kEchoChars = 200;
constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr char kSyntax[] =
    "; the syntax is task counts separated by commas, each N (one node with N tasks) or N(xM) "
    "(M nodes with N tasks each), e.g. '2(x3),1'";

struct Entry {
    std::uint32_t count = 0;
    std::uint64_t repeat = 1;
};

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

bool all_digits(std::string_view s) {
    for (char c : s) {
        if (c < '0' || c > '9') return false;
    }
    return !s.empty();
}

class Parser {
  public:
    explicit Parser(std::string_view spec) : spec_(spec) {}

    Result<std::vector<Entry>> parse() {
        std::vector<Entry> out;
        if (trim(spec_).empty()) return fail("the list is empty");
        std::string_view rest = spec_;
        while (true) {
            const std::size_t comma = rest.find(',');
            SDDP_TRY(entry, parse_entry(trim(rest.substr(0, comma))));
            out.push_back(entry);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
        return out;
    }

  private:
    Error fail(const std::string& problem) const {
        return make_error(Errc::invalid_input, "task count list " + quote_value(spec_, kEchoChars) +
                                                   ": " + problem + kSyntax);
    }

    // Naming the entry only helps when the list has more than one.
    Error fail_in(std::string_view entry, const std::string& problem) const {
        if (entry.size() == trim(spec_).size()) return fail("it " + problem);
        return fail("entry " + quote_value(entry, kEchoChars) + " " + problem);
    }

    Result<std::uint64_t> number(std::string_view entry, std::string_view text, const char* what,
                                 std::uint64_t max) const {
        if (text.empty()) return fail_in(entry, std::string("is missing the ") + what);
        if (text.front() == '-') {
            return fail_in(
                entry, std::string("has a negative ") + what + " " + quote_value(text, kEchoChars));
        }
        if (!all_digits(text)) {
            return fail_in(entry, std::string("has a ") + what + " " +
                                      quote_value(text, kEchoChars) + " that is not a number");
        }
        const auto v = parse_decimal(text, max);
        if (!v) {
            return fail_in(entry, std::string("has a ") + what + " " +
                                      quote_value(text, kEchoChars) + " above " +
                                      std::to_string(max));
        }
        return *v;
    }

    Result<Entry> parse_entry(std::string_view entry) {
        if (entry.empty()) {
            return fail("it has an empty entry (a ',' with no count on one side of it)");
        }
        const std::size_t open = entry.find('(');
        if (open == std::string_view::npos) {
            if (entry.find(')') != std::string_view::npos) {
                return fail_in(entry, "has a ')' without a matching '('");
            }
            if (entry.find_first_of("xX") != std::string_view::npos) {
                return fail_in(entry, "has a repeat without parentheses; write N(xM)");
            }
            SDDP_TRY(count, number(entry, entry, "task count", kU32Max));
            return Entry{static_cast<std::uint32_t>(count), 1};
        }
        if (entry.back() != ')') {
            return fail_in(entry, "does not end with ')' after the repeat; write N(xM)");
        }
        const auto inner = entry.substr(open + 1, entry.size() - open - 2);
        if (inner.empty() || inner.front() != 'x') {
            return fail_in(entry,
                           "lacks the 'x' that starts a repeat inside the parentheses; "
                           "write N(xM)");
        }
        SDDP_TRY(count, number(entry, entry.substr(0, open), "task count", kU32Max));
        SDDP_TRY(repeat, number(entry, inner.substr(1), "repeat count", kU64Max));
        if (repeat == 0) return fail_in(entry, "repeats 0 times; the repeat count must be >= 1");
        return Entry{static_cast<std::uint32_t>(count), repeat};
    }

    std::string_view spec_;
};

}  // namespace

Result<std::vector<std::uint32_t>> expand_task_counts(std::string_view spec,
                                                      std::size_t max_entries) {
    SDDP_TRY(entries, Parser(spec).parse());
    std::uint64_t total = 0;
    for (const auto& e : entries) total = e.repeat > kU64Max - total ? kU64Max : total + e.repeat;
    if (total > max_entries) {
        return make_error(
            Errc::too_large,
            "task count list " + quote_value(spec, kEchoChars) + " expands to " +
                (total == kU64Max ? "at least " + std::to_string(kU64Max) : std::to_string(total)) +
                " nodes, more than the limit of " + std::to_string(max_entries) +
                "; check the (xM) repeat counts for a typo");
    }
    std::vector<std::uint32_t> counts;
    counts.reserve(static_cast<std::size_t>(total));
    for (const auto& e : entries) counts.insert(counts.end(), e.repeat, e.count);
    return counts;
}

}  // namespace sddp
