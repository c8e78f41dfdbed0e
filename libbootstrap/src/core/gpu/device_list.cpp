// SPDX-License-Identifier: Apache-2.0
#include "core/gpu/device_list.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/base/numbers.hpp"

namespace sddp {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool is_hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// UUID body after "GPU-": hex digits and dashes, starting with a hex digit. CUDA accepts any
// unique prefix of the UUID, so the length is not fixed.
bool valid_uuid_body(std::string_view s) {
    if (s.empty() || s.size() > 64 || !is_hex(s.front())) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return is_hex(c) || c == '-'; });
}

// After "MIG-": either "<uuid>" (R470+ drivers) or "GPU-<uuid>/<gi>/<ci>" (older drivers).
bool valid_mig_body(std::string_view s) {
    if (s.substr(0, 4) == "GPU-") {
        const auto slash = s.find('/');
        if (slash == std::string_view::npos || !valid_uuid_body(s.substr(4, slash - 4)))
            return false;
        std::string_view rest = s.substr(slash + 1);
        const auto slash2 = rest.find('/');
        if (slash2 == std::string_view::npos) return false;
        return parse_decimal(rest.substr(0, slash2), 1000).has_value() &&
               parse_decimal(rest.substr(slash2 + 1), 1000).has_value();
    }
    return valid_uuid_body(s);
}

Result<DeviceId> parse_entry(std::string_view entry, std::string_view whole,
                             std::string_view name) {
    auto bad = [&](std::string_view why) {
        return make_error(Errc::invalid_input, std::string(name) + "=" + quote_value(whole) +
                                                   ": entry " + quote_value(entry) + " " +
                                                   std::string(why));
    };
    if (entry.empty()) return bad("is empty (two commas in a row or a trailing comma)");
    if (entry.substr(0, 4) == "GPU-") {
        if (!valid_uuid_body(entry.substr(4)))
            return bad("is not a GPU UUID (expected GPU- followed by hex digits and dashes)");
        return DeviceId{DeviceIdKind::uuid, -1, std::string(entry)};
    }
    if (entry.substr(0, 4) == "MIG-") {
        if (!valid_mig_body(entry.substr(4)))
            return bad("is not a MIG device id (expected MIG-<uuid> or MIG-GPU-<uuid>/<gi>/<ci>)");
        return DeviceId{DeviceIdKind::mig, -1, std::string(entry)};
    }
    const auto v = parse_decimal(entry, kMaxDeviceOrdinal);
    if (!v) {
        return bad("is not a device index, GPU UUID or MIG id (indices are decimal, 0.." +
                   std::to_string(kMaxDeviceOrdinal) + ")");
    }
    const int ordinal = static_cast<int>(*v);
    return DeviceId{DeviceIdKind::ordinal, ordinal, std::to_string(ordinal)};
}

}  // namespace

Result<std::vector<DeviceId>> parse_device_list(std::string_view text, std::string_view name) {
    if (text.size() > kMaxDeviceListChars) {
        return make_error(Errc::too_large, std::string(name) + " is " +
                                               std::to_string(text.size()) +
                                               " characters long; refusing more than " +
                                               std::to_string(kMaxDeviceListChars));
    }
    std::vector<DeviceId> out;
    const std::string_view whole = trim(text);
    if (whole.empty() || whole == "NoDevFiles") return out;
    std::set<std::string, std::less<>> seen;
    std::size_t pos = 0;
    while (true) {
        const auto comma = whole.find(',', pos);
        const auto entry = trim(whole.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
        SDDP_TRY(id, parse_entry(entry, whole, name));
        if (!seen.insert(id.text).second) {
            return make_error(Errc::invalid_input, std::string(name) + "=" + quote_value(whole) +
                                                       " lists device " + quote_value(id.text) +
                                                       " twice");
        }
        if (out.size() == kMaxDevices) {
            return make_error(Errc::too_large, std::string(name) + " lists more than " +
                                                   std::to_string(kMaxDevices) + " devices");
        }
        out.push_back(std::move(id));
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

Result<std::vector<int>> parse_index_list(std::string_view text, std::string_view name) {
    SDDP_TRY(ids, parse_device_list(text, name));
    std::vector<int> out;
    out.reserve(ids.size());
    for (const auto& id : ids) {
        if (id.kind != DeviceIdKind::ordinal) {
            return make_error(Errc::invalid_input, std::string(name) + "=" + quote_value(text) +
                                                       ": expected device indices only, found " +
                                                       quote_value(id.text));
        }
        out.push_back(id.ordinal);
    }
    return out;
}

std::string format_device_list(const std::vector<DeviceId>& ids) {
    std::string out;
    for (const auto& id : ids) {
        if (!out.empty()) out += ',';
        out += id.text;
    }
    return out;
}

std::string format_device_list(const std::vector<std::string>& entries) {
    std::string out;
    for (const auto& e : entries) {
        if (!out.empty()) out += ',';
        out += e;
    }
    return out;
}

std::string gpu_uuid_of(const DeviceId& id) {
    if (id.kind == DeviceIdKind::uuid) return id.text;
    if (id.kind == DeviceIdKind::mig && id.text.compare(0, 8, "MIG-GPU-") == 0) {
        const auto slash = id.text.find('/');
        return id.text.substr(4, slash - 4);
    }
    return {};
}

}  // namespace sddp
