// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/base/bytes.hpp"
#include "core/base/numbers.hpp"

namespace sddp {
namespace {

constexpr std::size_t kEchoChars = 200;
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr char kSyntax[] =
    "; a host list is host names separated by commas, each name with optional numeric ranges in "
    "brackets, e.g. 'node[01-04,07],login1' or 'rack[1-2]-gpu[1-8]-ib'";

struct Range {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::size_t width = 0;  // Slurm pads every value to the digit count of the low bound
};

// One bracket group: the ranges in the order written.
using Group = std::vector<Range>;

// One element of the list. literals[i] precedes groups[i]; literals.back() ends every name.
struct Pattern {
    std::vector<std::string_view> literals;
    std::vector<Group> groups;
};

// Slurm (since 23.02, which added the newline) splits elements on exactly these three.
bool is_separator_space(char c) {
    return c == ' ' || c == '\t' || c == '\n';
}

bool is_name_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7f && c != ',' && c != '[' && c != ']';
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
    return a > kU64Max - b ? kU64Max : a + b;
}

std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
    if (a != 0 && b > kU64Max / a) return kU64Max;
    return a * b;
}

// parse_decimal caps the text at 20 characters; padding zeros of any width are fine here.
std::optional<std::uint64_t> parse_u64(std::string_view digits) {
    while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
    return parse_decimal(digits, kU64Max);
}

std::size_t decimal_digits(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 10) {
        v /= 10;
        ++n;
    }
    return n;
}

void append_padded(std::string& out, std::uint64_t v, std::size_t width) {
    char buf[20];
    std::size_t n = 0;
    do {
        buf[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (width > n) out.append(width - n, '0');
    while (n != 0) out += buf[--n];
}

std::string char_name(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u > 0x20 && u < 0x7f) return std::string("'") + c + "'";
    return "byte \\x" + to_hex(std::string_view(&c, 1));
}

// Parses a whole list into patterns. Every check that does not depend on the cap happens here,
// so expand_hostlist and first_hostlist_host accept and reject the same lists.
class Parser {
  public:
    explicit Parser(std::string_view list) : list_(list) {}

    Result<std::vector<Pattern>> parse() {
        std::vector<Pattern> out;
        std::size_t i = skip_spaces(0);
        if (i == list_.size()) return fail("the list is empty");
        while (true) {
            if (list_[i] == ',') {
                return fail("empty element at character " + std::to_string(i + 1) +
                            " (a ',' with no host name before it)");
            }
            const std::size_t start = i;
            bool in_brackets = false;
            for (; i < list_.size(); ++i) {
                const char c = list_[i];
                if (in_brackets) {
                    in_brackets = c != ']';
                } else if (c == ',' || is_separator_space(c)) {
                    break;
                } else {
                    in_brackets = c == '[';
                }
            }
            SDDP_TRY(pattern, parse_element(list_.substr(start, i - start)));
            out.push_back(std::move(pattern));
            i = skip_spaces(i);
            if (i == list_.size()) break;
            if (list_[i] == ',') {
                i = skip_spaces(i + 1);
                if (i == list_.size()) {
                    return fail(
                        "empty element at the end (a trailing ',' with no host name after "
                        "it)");
                }
            }
        }
        return out;
    }

  private:
    std::size_t skip_spaces(std::size_t i) const {
        while (i < list_.size() && is_separator_space(list_[i])) ++i;
        return i;
    }

    Error fail(const std::string& problem) const {
        return make_error(Errc::invalid_input,
                          "host list " + quote_value(list_, kEchoChars) + ": " + problem + kSyntax);
    }

    // Naming the element only helps when the list has more than one.
    Error fail_in(std::string_view elem, const std::string& problem) const {
        if (elem.size() == list_.size()) return fail("it " + problem);
        return fail("element " + quote_value(elem, kEchoChars) + " " + problem);
    }

    Result<Pattern> parse_element(std::string_view elem) {
        Pattern p;
        std::size_t lit_start = 0;
        std::size_t i = 0;
        while (i < elem.size()) {
            const char c = elem[i];
            if (c == '[') {
                const std::size_t close = elem.find_first_of("[]", i + 1);
                if (close == std::string_view::npos) {
                    return fail_in(elem, "has a '[' that is never closed with ']'");
                }
                if (elem[close] == '[') {
                    return fail_in(elem, "has a '[' inside brackets; brackets cannot be nested");
                }
                p.literals.push_back(elem.substr(lit_start, i - lit_start));
                SDDP_TRY(group, parse_group(elem, elem.substr(i + 1, close - i - 1)));
                p.groups.push_back(std::move(group));
                i = close + 1;
                lit_start = i;
                continue;
            }
            if (c == ']') return fail_in(elem, "has a ']' without a matching '['");
            if (!is_name_char(c)) {
                return fail_in(elem, "contains " + char_name(c) +
                                         ", which is not allowed in a host name (printable ASCII "
                                         "only)");
            }
            ++i;
        }
        p.literals.push_back(elem.substr(lit_start));
        SDDP_CHECK(check_name_length(elem, p));
        return p;
    }

    Status check_name_length(std::string_view elem, const Pattern& p) const {
        std::size_t longest = 0;
        for (auto lit : p.literals) longest += lit.size();
        for (const auto& group : p.groups) {
            std::size_t widest = 0;
            for (const auto& r : group) {
                widest = std::max({widest, r.width, decimal_digits(r.hi)});
            }
            longest += widest;
        }
        if (longest > kMaxHostNameLength) {
            return fail_in(elem, "gives host names of up to " + std::to_string(longest) +
                                     " characters, more than the limit of " +
                                     std::to_string(kMaxHostNameLength));
        }
        return ok_status();
    }

    Result<Group> parse_group(std::string_view elem, std::string_view body) {
        if (body.empty()) return fail_in(elem, "has empty brackets '[]'");
        Group group;
        while (true) {
            const std::size_t comma = body.find(',');
            SDDP_TRY(range, parse_range(elem, body.substr(0, comma)));
            group.push_back(range);
            if (comma == std::string_view::npos) break;
            body.remove_prefix(comma + 1);
        }
        return group;
    }

    Result<Range> parse_range(std::string_view elem, std::string_view text) {
        if (text.empty()) {
            return fail_in(elem, "has an empty range inside brackets (a stray ',')");
        }
        for (char c : text) {
            if (is_separator_space(c)) return fail_in(elem, "has whitespace inside brackets");
        }
        const std::string what = "range " + quote_value(text, kEchoChars);
        const std::size_t dash = text.find('-');
        const auto lo_text = text.substr(0, dash);
        const auto hi_text = dash == std::string_view::npos ? lo_text : text.substr(dash + 1);
        if (lo_text.empty()) {
            return fail_in(elem, "has " + what +
                                     " without a low bound (negative numbers are "
                                     "not allowed)");
        }
        if (hi_text.empty()) return fail_in(elem, "has " + what + " without a high bound");
        for (char c : text) {
            if (!is_digit(c) && c != '-') {
                return fail_in(elem, "has " + what +
                                         ", which is not a number or a range of numbers "
                                         "like 1-4 or 007-012");
            }
        }
        if (hi_text.find('-') != std::string_view::npos) {
            return fail_in(elem, "has " + what +
                                     " with more than one '-' (negative numbers are "
                                     "not allowed)");
        }
        const auto lo = parse_u64(lo_text);
        const auto hi = parse_u64(hi_text);
        if (!lo || !hi) {
            return fail_in(elem, "has " + what + " with a number above " + std::to_string(kU64Max));
        }
        if (*lo > *hi) {
            return fail_in(elem, "has reversed " + what + " (the low bound comes first, e.g. " +
                                     std::string(hi_text) + "-" + std::string(lo_text) + ")");
        }
        return Range{*lo, *hi, lo_text.size()};
    }

    std::string_view list_;
};

std::uint64_t host_count(const Pattern& p) {
    std::uint64_t total = 1;
    for (const auto& group : p.groups) {
        std::uint64_t n = 0;
        for (const auto& r : group) n = sat_add(n, sat_add(r.hi - r.lo, 1));
        total = sat_mul(total, n);
    }
    return total;
}

struct Cursor {
    std::size_t range = 0;
    std::uint64_t value = 0;
};

std::string render(const Pattern& p, const std::vector<Cursor>& at) {
    std::string name(p.literals[0]);
    for (std::size_t g = 0; g < p.groups.size(); ++g) {
        append_padded(name, at[g].value, p.groups[g][at[g].range].width);
        name += p.literals[g + 1];
    }
    return name;
}

// Steps one group to its next value; false (and back to the first value) when it wraps.
bool advance(const Group& group, Cursor& c) {
    if (c.value < group[c.range].hi) {
        ++c.value;
        return true;
    }
    c.range = c.range + 1 < group.size() ? c.range + 1 : 0;
    c.value = group[c.range].lo;
    return c.range != 0;
}

// Slurm's order for several groups, from its recursive expansion: the last group varies
// fastest, then the first, second, ... up to the next-to-last, which varies slowest.
// a[1-2]b[1-2]c[1-2] -> a1b1c1 a1b1c2 a2b1c1 a2b1c2 a1b2c1 ...
void expand_pattern(const Pattern& p, std::vector<std::string>& out) {
    const std::size_t k = p.groups.size();
    std::vector<Cursor> at(k);
    for (std::size_t g = 0; g < k; ++g) at[g].value = p.groups[g][0].lo;
    if (k == 0) {
        out.push_back(render(p, at));
        return;
    }
    while (true) {
        out.push_back(render(p, at));
        if (advance(p.groups[k - 1], at[k - 1])) continue;
        std::size_t g = 0;
        while (g + 1 < k && !advance(p.groups[g], at[g])) ++g;
        if (g + 1 == k) return;
    }
}

// Splits a host into text and trailing number; false when it has no usable number.
bool split_number(std::string_view host, std::string_view& prefix, std::string_view& digits,
                  std::uint64_t& value) {
    std::size_t i = host.size();
    while (i > 0 && is_digit(host[i - 1])) --i;
    prefix = host.substr(0, i);
    digits = host.substr(i);
    const auto v = parse_u64(digits);
    if (!v) return false;
    value = *v;
    return true;
}

struct Run {
    std::string_view lo_digits;
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
};

std::string format_group(std::string_view prefix, const std::vector<Run>& runs) {
    std::string out(prefix);
    out += '[';
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (i != 0) out += ',';
        out += runs[i].lo_digits;
        if (runs[i].hi != runs[i].lo) {
            out += '-';
            append_padded(out, runs[i].hi, runs[i].lo_digits.size());
        }
    }
    out += ']';
    return out;
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view list, std::size_t max_hosts) {
    SDDP_TRY(patterns, Parser(list).parse());
    std::uint64_t total = 0;
    for (const auto& p : patterns) total = sat_add(total, host_count(p));
    if (total > max_hosts) {
        const std::string count =
            total == kU64Max ? "at least " + std::to_string(kU64Max) : std::to_string(total);
        return make_error(Errc::too_large,
                          "host list " + quote_value(list, kEchoChars) + " expands to " + count +
                              " hosts, more than the limit of " + std::to_string(max_hosts) +
                              "; check the ranges for a typo");
    }
    std::vector<std::string> hosts;
    hosts.reserve(static_cast<std::size_t>(total));
    for (const auto& p : patterns) expand_pattern(p, hosts);
    return hosts;
}

Result<std::string> first_hostlist_host(std::string_view list) {
    SDDP_TRY(patterns, Parser(list).parse());
    const Pattern& p = patterns.front();
    std::vector<Cursor> at(p.groups.size());
    for (std::size_t g = 0; g < p.groups.size(); ++g) at[g].value = p.groups[g][0].lo;
    return render(p, at);
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
    std::string out;
    std::size_t i = 0;
    while (i < hosts.size()) {
        if (!out.empty()) out += ',';
        std::string_view prefix;
        std::string_view digits;
        std::uint64_t value = 0;
        if (!split_number(hosts[i], prefix, digits, value)) {
            out += hosts[i++];
            continue;
        }
        // Collect the following hosts with the same prefix into one bracket group.
        std::vector<Run> runs{{digits, value, value}};
        std::size_t j = i + 1;
        for (; j < hosts.size(); ++j) {
            std::string_view next_prefix;
            std::string_view next_digits;
            std::uint64_t next = 0;
            if (!split_number(hosts[j], next_prefix, next_digits, next) || next_prefix != prefix) {
                break;
            }
            // A run continues only if padding to the run's width reproduces the digits exactly.
            Run& run = runs.back();
            std::string expected;
            if (run.hi != kU64Max && next == run.hi + 1) {
                append_padded(expected, next, run.lo_digits.size());
            }
            if (expected == next_digits) {
                run.hi = next;
            } else {
                runs.push_back({next_digits, next, next});
            }
        }
        if (j == i + 1) {
            out += hosts[i];
        } else {
            out += format_group(prefix, runs);
        }
        i = j;
    }
    return out;
}

}  // namespace sddp
