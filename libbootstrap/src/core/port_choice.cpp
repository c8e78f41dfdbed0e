#include "core/port_choice.hpp"

#include <cerrno>

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

}  // namespace

Result<PortChoice> choose_master_port(std::uint32_t job_id, std::uint32_t step_id,
                                      std::optional<std::string_view> resv_ports,
                                      const DdpOptions& opts) {
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
    const PortRange range = opts.port_range.value_or(kDefaultPortRange);
    const std::uint64_t span = range.last - range.first + 1;
    const std::uint64_t slot = (mix64(job_id) + step_id) % span;
    return PortChoice{static_cast<std::uint16_t>(range.first + slot), "derived"};
}

Status master_port_status(std::uint16_t port, std::string_view source, int bind_errno) {
    if (bind_errno == 0) return ok_status();
    const std::string what = "MASTER_PORT=" + std::to_string(port) + " (" + std::string(source) +
                             ") cannot be used on rank 0's node: ";
    if (bind_errno == EADDRINUSE) {
        return make_error(
            Errc::io, what +
                          "another process holds it; give a free port with --ddp=port=N, or "
                          "let Slurm reserve one with srun --resv-ports (needs MpiParams=ports= "
                          "in slurm.conf)");
    }
    return make_error(Errc::io, what + "binding it failed with errno " +
                                    std::to_string(bind_errno) +
                                    "; give another port with --ddp=port=N");
}

}  // namespace sddp
