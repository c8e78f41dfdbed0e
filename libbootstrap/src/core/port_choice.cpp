#include "core/port_choice.hpp"

#include "core/numbers.hpp"

namespace sddp {
namespace {

// splitmix64's finaliser: neighbouring and congruent job ids map to unrelated values.
std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::string range_text(PortRange r) {
    return std::to_string(r.first) + "-" + std::to_string(r.last);
}

}  // namespace

std::optional<PortRange> parse_ephemeral_range(std::string_view text) {
    auto skip_ws = [&] {
        while (!text.empty() &&
               (text.front() == ' ' || text.front() == '\t' || text.front() == '\n'))
            text.remove_prefix(1);
    };
    auto number = [&]() -> std::optional<std::uint64_t> {
        std::size_t n = 0;
        while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
        auto v = parse_decimal(text.substr(0, n), 65535);
        text.remove_prefix(n);
        return v;
    };
    skip_ws();
    const auto lo = number();
    skip_ws();
    const auto hi = number();
    skip_ws();
    if (!lo || !hi || *lo > *hi || !text.empty()) return std::nullopt;
    return PortRange{static_cast<std::uint16_t>(*lo), static_cast<std::uint16_t>(*hi)};
}

Result<PortRange> usable_port_range(PortRange site, std::optional<PortRange> eph) {
    if (!eph || eph->last < site.first || eph->first > site.last) return site;
    std::optional<PortRange> below, above;
    if (eph->first > site.first)
        below = PortRange{site.first, static_cast<std::uint16_t>(eph->first - 1)};
    if (eph->last < site.last)
        above = PortRange{static_cast<std::uint16_t>(eph->last + 1), site.last};
    auto size = [](const std::optional<PortRange>& r) { return r ? r->last - r->first + 1 : 0; };
    if (!below && !above) {
        return make_error(Errc::invalid_input,
                          "port-range=" + range_text(site) +
                              " lies inside the kernel's ephemeral port range " + range_text(*eph) +
                              " (/proc/sys/net/ipv4/ip_local_port_range), where any outgoing "
                              "connection may hold a port; set the plugin argument port-range= to "
                              "ports outside it, e.g. 20000-29999");
    }
    return size(below) >= size(above) ? *below : *above;
}

Result<PortChoice> choose_master_port(std::uint32_t job_id, std::uint32_t step_id,
                                      std::uint32_t het_offset,
                                      std::optional<std::string_view> resv_ports,
                                      const DdpOptions& opts, std::optional<PortRange> ephemeral) {
    if (opts.port) return PortChoice{*opts.port, "option"};
    if (resv_ports && !resv_ports->empty()) {
        // Slurm writes "LO-HI" or a single port; the first one is ours.
        auto first = resv_ports->substr(0, resv_ports->find_first_of("-,"));
        const auto v = parse_decimal(first, 65535);
        if (!v || *v == 0) {
            return make_error(Errc::invalid_input,
                              "SLURM_STEP_RESV_PORTS=" + quote_value(*resv_ports) +
                                  " is not a port list like 12000-12003; check MpiParams=ports= "
                                  "in slurm.conf, or give --ddp=port=N");
        }
        return PortChoice{static_cast<std::uint16_t>(*v), "reserved"};
    }
    auto range = usable_port_range(opts.port_range.value_or(kDefaultPortRange), ephemeral);
    if (!range) return range.take_error();
    const std::uint64_t span = range->last - range->first + 1;
    const std::uint64_t slot = (mix64(job_id) + step_id + (std::uint64_t{het_offset} << 16)) % span;
    return PortChoice{static_cast<std::uint16_t>(range->first + slot), "derived"};
}

}  // namespace sddp
