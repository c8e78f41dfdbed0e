// SPDX-License-Identifier: Apache-2.0
#include "core/task/identity.hpp"

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"
#include "core/options/option_params.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {
namespace {

// Ranks fit the same cap as the core's task counts; 1<<24 is far above any real job.
constexpr std::uint64_t kMaxRanks = 1u << 24;

struct Var {
    const char* name;
    std::optional<std::string> value;
};

Var get(const EnvLookup& env, const char* name) {
    return Var{name, env(name)};
}

// A set variable must be a number; an unset one is nullopt. "RANK=" (set, empty) is malformed:
// a script that meant to set it failed, and guessing 0 would silently give two rank 0s.
Result<std::optional<std::uint32_t>> number(const Var& v, std::string_view fix) {
    if (!v.value) return std::optional<std::uint32_t>{};
    const auto n = parse_decimal(*v.value, kMaxRanks);
    if (!n) {
        return make_error(Errc::invalid_input, std::string(v.name) + "=" + quote_value(*v.value) +
                                                   " is not a non-negative integer; " +
                                                   std::string(fix));
    }
    return std::optional<std::uint32_t>(static_cast<std::uint32_t>(*n));
}

// Two variables that only make sense together: both or neither.
Status both_or_neither(const Var& a, const Var& b, std::string_view launcher) {
    if (a.value.has_value() == b.value.has_value()) return ok_status();
    const Var& set = a.value ? a : b;
    const Var& unset = a.value ? b : a;
    return make_error(Errc::missing_input, std::string(set.name) + "=" + quote_value(*set.value) +
                                               " is set but " + unset.name + " is not; " +
                                               std::string(launcher) +
                                               " sets both: set both or neither");
}

Status less_than(const char* lo_name, std::uint32_t lo, const char* hi_name, std::uint32_t hi,
                 std::string_view fix) {
    if (lo < hi) return ok_status();
    return make_error(Errc::invalid_input,
                      std::string(lo_name) + "=" + std::to_string(lo) + " is not below " + hi_name +
                          "=" + std::to_string(hi) + " (valid: 0.." +
                          (hi == 0 ? std::string("none") : std::to_string(hi - 1)) + "); " +
                          std::string(fix));
}

// Two spellings of one value (NODE_RANK/GROUP_RANK) must agree.
Result<std::optional<std::uint32_t>> agreeing(const Var& a, const Var& b, std::string_view fix) {
    SDDP_TRY(x, number(a, fix));
    SDDP_TRY(y, number(b, fix));
    if (x && y && *x != *y) {
        return make_error(Errc::invalid_input, std::string(a.name) + "=" + std::to_string(*x) +
                                                   " and " + b.name + "=" + std::to_string(*y) +
                                                   " disagree; " + std::string(fix));
    }
    return x ? x : y;
}

Status read_master(const EnvLookup& env, const IdentityInputs& in, Identity& id) {
    if (in.master_addr && !in.master_addr->empty()) {
        id.master_addr = *in.master_addr;
    } else if (auto a = env("MASTER_ADDR"); a && !a->empty()) {
        id.master_addr = *a;
    }
    if (in.master_port && *in.master_port != 0) {
        id.master_port = *in.master_port;
    } else if (auto p = env("MASTER_PORT"); p && !p->empty()) {
        const auto n = parse_decimal(*p, 65535);
        if (!n || *n == 0) {
            return make_error(Errc::invalid_input, "MASTER_PORT=" + quote_value(*p) +
                                                       " is not a port number (1..65535); fix "
                                                       "or unset it");
        }
        id.master_port = static_cast<std::uint16_t>(*n);
    }
    return ok_status();
}

// Local rank / size pair and node index shared by the ddp and mpi sources.
Status read_locality(const Var& lr, const Var& lws, std::string_view launcher, std::string_view fix,
                     Identity& id) {
    SDDP_CHECK(both_or_neither(lr, lws, launcher));
    SDDP_TRY(local_rank, number(lr, fix));
    SDDP_TRY(local_size, number(lws, fix));
    if (!local_rank) return ok_status();
    if (*local_size == 0) {
        return make_error(
            Errc::invalid_input,
            std::string(lws.name) + "=0: a node runs at least one rank; " + std::string(fix));
    }
    SDDP_CHECK(less_than(lr.name, *local_rank, lws.name, *local_size, fix));
    if (*local_size > id.world_size) {
        return make_error(Errc::invalid_input,
                          std::string(lws.name) + "=" + std::to_string(*local_size) +
                              " exceeds the world size " + std::to_string(id.world_size) + "; " +
                              std::string(fix));
    }
    id.locality_known = true;
    id.local_rank = *local_rank;
    id.local_world_size = *local_size;
    return ok_status();
}

constexpr std::string_view kDdpFix =
    "these come from srun --ddp or torchrun: relaunch with one of them, or fix the exported values";

Result<Identity> from_ddp(const EnvLookup& env) {
    Identity id;
    id.source = IdentitySource::ddp;
    id.source_detail = "RANK/WORLD_SIZE";
    const Var rank = get(env, "RANK"), world = get(env, "WORLD_SIZE");
    if (!rank.value || !world.value) {
        std::string set;
        for (const char* n : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) {
            if (auto v = env(n))
                set += (set.empty() ? "" : ", ") + std::string(n) + "=" + quote_value(*v);
        }
        const std::string missing = !rank.value && !world.value ? "RANK and WORLD_SIZE are"
                                    : !rank.value               ? "RANK is"
                                                                : "WORLD_SIZE is";
        return make_error(Errc::missing_input, set + " set but " + missing +
                                                   " not: a partial identity cannot be trusted; " +
                                                   std::string(kDdpFix));
    }
    SDDP_TRY(r, number(rank, kDdpFix));
    SDDP_TRY(w, number(world, kDdpFix));
    if (*w == 0) return make_error(Errc::invalid_input, "WORLD_SIZE=0: " + std::string(kDdpFix));
    SDDP_CHECK(less_than("RANK", *r, "WORLD_SIZE", *w, kDdpFix));
    id.rank = *r;
    id.world_size = *w;
    SDDP_CHECK(read_locality(get(env, "LOCAL_RANK"), get(env, "LOCAL_WORLD_SIZE"),
                             "srun --ddp (and torchrun)", kDdpFix, id));
    SDDP_TRY(node, agreeing(get(env, "NODE_RANK"), get(env, "GROUP_RANK"), kDdpFix));
    SDDP_TRY(nnodes, agreeing(get(env, "NNODES"), get(env, "GROUP_WORLD_SIZE"), kDdpFix));
    if (node && nnodes) {
        SDDP_CHECK(less_than(get(env, "NODE_RANK").value ? "NODE_RANK" : "GROUP_RANK", *node,
                             get(env, "NNODES").value ? "NNODES" : "GROUP_WORLD_SIZE", *nnodes,
                             kDdpFix));
    }
    if (nnodes && *nnodes > id.world_size) {
        return make_error(Errc::invalid_input,
                          "NNODES=" + std::to_string(*nnodes) + " exceeds WORLD_SIZE=" +
                              std::to_string(id.world_size) + "; " + std::string(kDdpFix));
    }
    id.node_rank = node;
    id.num_nodes = nnodes;
    return id;
}

bool has_ddp(const EnvLookup& env) {
    for (const char* n : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) {
        if (env(n)) return true;
    }
    return false;
}

bool has_slurm_task(const EnvLookup& env) {
    if (!env("SLURM_PROCID")) return false;
    const auto step = read_step_id(env);
    // The batch script and the extern/interactive steps are one process, not a parallel step.
    return step && !is_special_step(*step);
}

Result<Identity> from_slurm(const EnvLookup& env, const IdentityInputs& in) {
    auto facts = read_step_facts(env);
    if (!facts) {
        return make_error(facts.error().code,
                          "Slurm's task variables are inconsistent (no RANK/WORLD_SIZE from srun "
                          "--ddp, so they were read instead): " +
                              facts.error().message);
    }
    StepOptions opts;  // the plugin's defaults: a bare srun --ddp
    LaunchContext ctx;
    ctx.hostfile_text = in.hostfile_text;
    ctx.hostfile_problem = in.hostfile_problem;
    // An option given to the library counts as the user's own value, like an exported one.
    ctx.user_master_addr = in.master_addr ? in.master_addr : env("MASTER_ADDR");
    if (in.master_port && *in.master_port != 0) {
        ctx.user_master_port = std::to_string(*in.master_port);
    } else {
        ctx.user_master_port = env("MASTER_PORT");
    }
    auto le = derive_launch_env(*facts, opts, ctx);
    if (!le) {
        return make_error(le.error().code, "from Slurm's task variables: " + le.error().message);
    }
    Identity id;
    id.source = IdentitySource::slurm;
    id.source_detail = "SLURM_PROCID/SLURM_STEP_NUM_TASKS";
    id.rank = le->rank;
    id.world_size = le->world_size;
    id.locality_known = true;
    id.local_rank = le->local_rank;
    id.local_world_size = le->local_world_size;
    id.node_rank = le->node_rank;
    id.num_nodes = le->nnodes;
    id.master_addr = le->master_addr;
    id.master_port = le->master_port;
    id.step_tag = le->step_tag;
    return id;
}

bool has_ompi(const EnvLookup& env) {
    return env("OMPI_COMM_WORLD_RANK") || env("OMPI_COMM_WORLD_SIZE");
}
bool has_pmi(const EnvLookup& env) {
    return env("PMI_RANK") || env("PMI_SIZE");
}

Result<Identity> from_mpi(const EnvLookup& env) {
    const bool ompi = has_ompi(env);
    const char* rank_name = ompi ? "OMPI_COMM_WORLD_RANK" : "PMI_RANK";
    const char* size_name = ompi ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE";
    const std::string launcher = ompi ? "Open MPI's mpirun" : "the PMI launcher";
    const std::string fix = "these come from " + launcher + "; do not set them by hand";
    const Var rank = get(env, rank_name), size = get(env, size_name);
    SDDP_CHECK(both_or_neither(rank, size, launcher));
    Identity id;
    id.source = IdentitySource::mpi;
    id.source_detail = ompi ? "OMPI_COMM_WORLD_*" : "PMI_RANK/PMI_SIZE";
    SDDP_TRY(r, number(rank, fix));
    SDDP_TRY(w, number(size, fix));
    if (*w == 0) return make_error(Errc::invalid_input, std::string(size_name) + "=0; " + fix);
    SDDP_CHECK(less_than(rank_name, *r, size_name, *w, fix));
    id.rank = *r;
    id.world_size = *w;
    // OMPI_COMM_WORLD_NODE_RANK is *not* a node index (it is a rank among the processes of all
    // jobs on the node), so the node index stays unknown under Open MPI. MPICH's hydra exports
    // MPI_LOCALRANKID / MPI_LOCALNRANKS for locality.
    if (ompi) {
        SDDP_CHECK(read_locality(get(env, "OMPI_COMM_WORLD_LOCAL_RANK"),
                                 get(env, "OMPI_COMM_WORLD_LOCAL_SIZE"), launcher, fix, id));
        if (auto j = env("OMPI_MCA_ess_base_jobid"); j && !j->empty()) id.step_tag = "ompi." + *j;
    } else {
        SDDP_CHECK(read_locality(get(env, "MPI_LOCALRANKID"), get(env, "MPI_LOCALNRANKS"), launcher,
                                 fix, id));
        if (auto j = env("PMI_JOBID"); j && !j->empty()) id.step_tag = *j;
    }
    return id;
}

Result<std::optional<int>> read_device(const EnvLookup& env) {
    const auto v = env(contract::kDeviceVar);
    if (!v) return std::optional<int>{};
    const auto n = parse_decimal(*v, 1023);
    if (!n) {
        return make_error(Errc::invalid_input,
                          std::string(contract::kDeviceVar) + "=" + quote_value(*v) +
                              " is not a device index (0..1023); srun --ddp sets it: unset it or "
                              "relaunch with srun --ddp");
    }
    return std::optional<int>(static_cast<int>(*n));
}

Result<Identity> pick_source(const EnvLookup& env, const IdentityInputs& in) {
    if (has_ddp(env)) return from_ddp(env);
    const bool mpi = has_ompi(env) || has_pmi(env);
    if (has_slurm_task(env)) {
        SDDP_TRY(slurm, from_slurm(env, in));
        if (mpi) {
            SDDP_TRY(m, from_mpi(env));
            // Different numbering: Slurm's variables belong to mpirun's daemon step.
            if (m.world_size != slurm.world_size || m.rank != slurm.rank) {
                SDDP_CHECK(read_master(env, in, m));
                return m;
            }
        }
        return slurm;
    }
    if (mpi) {
        SDDP_TRY(m, from_mpi(env));
        SDDP_CHECK(read_master(env, in, m));
        return m;
    }
    Identity single;
    single.source_detail = "no launcher variables";
    single.locality_known = true;
    single.node_rank = 0;
    single.num_nodes = 1;
    SDDP_CHECK(read_master(env, in, single));
    return single;
}

}  // namespace

const char* to_string(IdentitySource source) {
    switch (source) {
        case IdentitySource::ddp:
            return "ddp";
        case IdentitySource::slurm:
            return "slurm";
        case IdentitySource::mpi:
            return "mpi";
        case IdentitySource::single:
            return "single";
    }
    return "unknown";
}

Result<std::optional<std::uint64_t>> read_timeout_ms(const EnvLookup& env) {
    const NumberParam& p = kTimeoutParam;
    const auto v = env(p.variable);
    if (!v || v->empty()) return std::optional<std::uint64_t>{};
    const auto n = parse_decimal(*v, p.max);
    if (!n || *n < p.min) {
        return make_error(Errc::invalid_input,
                          std::string(p.variable) + "=" + quote_value(*v) +
                              " is not a number of seconds (" + std::to_string(p.min) + ".." +
                              std::to_string(p.max) + "); fix it or unset it for the default of " +
                              std::to_string(p.value));
    }
    return std::optional<std::uint64_t>(*n * 1000);
}

Result<Identity> detect_identity(const EnvLookup& env, const IdentityInputs& in) {
    SDDP_TRY(id, pick_source(env, in));
    if (id.source == IdentitySource::ddp) SDDP_CHECK(read_master(env, in, id));
    if (auto tag = env(contract::kStepVar); tag && !tag->empty()) id.step_tag = *tag;
    SDDP_TRY(secret, contract::read_secret(env));
    id.secret = std::move(secret);
    SDDP_TRY(device, read_device(env));
    id.device = device;
    // `id` is a reference into the Result (SDDP_TRY): move, or it is copied.
    return std::move(id);  // cppcheck-suppress returnStdMoveLocal
}

}  // namespace sddp
