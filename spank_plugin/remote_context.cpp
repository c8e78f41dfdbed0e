#include "remote_context.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "core/launch_env.hpp"
#include "core/port_choice.hpp"
#include "core/step_facts.hpp"
#include "plugin_log.hpp"
#include "plugin_state.hpp"
#include "spank_env.hpp"
#include "core/layout_table.hpp"

namespace sddp::plugin {
namespace {

// Read at most `limit` bytes of a small file (procfs, a host file). No exceptions, no streams.
std::optional<std::string> read_small_file(const std::string& path, std::size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    while (out.size() < limit) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (out.size() > limit) out.resize(limit);
    return out;
}

LaunchContext gather_context(const EnvLookup& env, const StepFacts& facts) {
    LaunchContext ctx;
    if (auto text = read_small_file("/proc/sys/net/ipv4/ip_local_port_range", 64)) {
        ctx.ephemeral_ports = parse_ephemeral_range(*text);
    }
    // task_init runs as the user, so reading the user's host file grants no privilege.
    if (facts.hostfile) {
        if (auto text = read_small_file(*facts.hostfile, 1 << 16)) {
            ctx.hostfile_first_host = first_host_in_hostfile(*text);
        }
    }
    ctx.user_master_addr = env("MASTER_ADDR");
    ctx.user_master_port = env("MASTER_PORT");
    return ctx;
}

int fail(const StepFacts* facts, const std::string& message) {
    std::string where;
    if (facts != nullptr) {
        where = " (rank " + std::to_string(facts->procid) + " on " + facts->node_name + ", step " +
                std::to_string(facts->job_id) + "." + std::to_string(facts->step_id) + ")";
    }
    log_error(message + where);
    write_task_stderr(std::string(kPluginName) + ": error: " + message + where + "\n");
    return -1;
}

int setup_task(spank_t sp) {
    const EnvLookup env = spank_env(sp);
    auto opts = effective_options(state());
    if (!opts) return fail(nullptr, opts.error().message);

    auto facts = read_step_facts(env);
    if (!facts) return fail(nullptr, facts.error().message);

    const LaunchContext ctx = gather_context(env, *facts);
    auto launch = derive_launch_env(*facts, *opts, ctx);
    if (!launch) return fail(&*facts, launch.error().message);

    if (auto st = apply_env(sp, launch->vars); !st) return fail(&*facts, st.error().message);

    log_debug("rank " + std::to_string(launch->rank) + "/" + std::to_string(launch->world_size) +
              " MASTER_ADDR=" + launch->master_addr + " MASTER_PORT=" +
              std::to_string(launch->master_port));
    if (opts->verbose.value_or(false) && launch->rank == 0) {
        write_task_stderr(format_layout_table(*facts, *launch, *opts, env("CUDA_VISIBLE_DEVICES")));
    }
    return 0;
}

}  // namespace

int on_task_init(spank_t sp) {
    // The batch script, extern and interactive steps are never touched, even with --ddp.
    std::uint32_t step_id = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) return 0;
    if (is_special_step(step_id)) return 0;
    if (!ddp_requested(state())) return 0;
    return setup_task(sp);
}

}  // namespace sddp::plugin
