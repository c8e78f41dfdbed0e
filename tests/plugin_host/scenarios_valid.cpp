// SPDX-License-Identifier: Apache-2.0
// --ddp steps that must work: the variables, the host file, help, GPU kinds, a shared debug
// directory refused.
#include "host.hpp"

namespace plugin_host {

// --ddp=hostfile: the file exists with the step's nodes while the task starts, and is gone after
// slurm_spank_exit; a second task of the node accepts the first one's file.
void scenario_hostfile() {
    // valid_env(3): rank 3 runs on the step's second node (SLURM_NODEID=1).
    const std::string path = "/tmp/slurm-ddp-hostfile." + std::to_string(::getuid()) + ".4242.3.1";
    ::unlink(path.c_str());
    Step s = ddp_step("valid --ddp=hostfile", valid_env(3));
    s.optarg = "hostfile";
    auto o = expect_task_ok(s);
    check(get(o.env, "SLURM_DDP_HOSTFILE") == path, s, o,
          "SLURM_DDP_HOSTFILE=" + get(o.env, "SLURM_DDP_HOSTFILE"));
    check(o.hostfile_text == std::optional<std::string>("n1 slots=2\nn2 slots=2\n"), s, o,
          "host file text '" + o.hostfile_text.value_or("<none>") + "'");
    check(!o.hostfile_left, s, o, "slurm_spank_exit left " + path);
    // A file someone else put there first (other text) is refused, never used.
    if (std::FILE* f = std::fopen(path.c_str(), "w")) {
        std::fputs("evil slots=99\n", f);
        std::fclose(f);
    }
    Step planted = ddp_step("--ddp=hostfile over a planted file", valid_env(3));
    planted.optarg = "hostfile";
    expect_task_error(planted, "is not this step's host file");
    ::unlink(path.c_str());
}

// `--ddp=help` in srun prints the table on stdout and exits 0 (in a child: it ends the process);
// in slurmstepd "help" is an invalid value, reported by task_init.
void scenario_help() {
    int pipefd[2];
    if (::pipe(pipefd) != 0) return;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(pipefd[1], STDOUT_FILENO);
        ::close(pipefd[0]);
        Step s = ddp_step("--ddp=help in srun", valid_env(0));
        s.context = S_CTX_LOCAL;
        s.optarg = "help";
        (void)run(s);
        ::_exit(42);  // not reached when the plugin exits
    }
    ::close(pipefd[1]);
    std::string out;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(pipefd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    Step s = ddp_step("--ddp=help in srun", valid_env(0));
    const Outcome none;
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, s, none,
          "srun --ddp=help did not exit 0 (status " + std::to_string(status) + ")");
    for (const char* needle : {"gpu-bind=local|single|closest|none", "TF_CONFIG", "hostfile",
                               "[site only: plugstack.conf]"}) {
        check(out.find(needle) != std::string::npos, s, none,
              std::string("--ddp=help does not print ") + needle);
    }
    Step remote = ddp_step("--ddp=help in slurmstepd", valid_env(0));
    remote.optarg = "help";
    expect_task_error(remote, "'help'");
}

void scenarios_valid() {
    scenario_hostfile();
    scenario_help();
    {  // (a) plain --ddp, rank 1 on n1
        auto o = expect_task_ok(ddp_step("valid rank 1 of 4", valid_env(1)));
        Step s = ddp_step("valid rank 1 of 4 (values)", valid_env(1));
        check(get(o.env, "RANK") == "1", s, o, "RANK=" + get(o.env, "RANK"));
        check(get(o.env, "WORLD_SIZE") == "4", s, o, "WORLD_SIZE");
        check(get(o.env, "LOCAL_RANK") == "1", s, o, "LOCAL_RANK");
        check(get(o.env, "MASTER_ADDR") == "n1", s, o, "MASTER_ADDR=" + get(o.env, "MASTER_ADDR"));
        const std::string port = get(o.env, "MASTER_PORT");
        const long p = std::strtol(port.c_str(), nullptr, 10);
        check(p >= 1024 && p <= 65535 && std::to_string(p) == port, s, o, "MASTER_PORT=" + port);
        check(o.task_stderr.empty(), s, o, "stderr not empty for a good step");
    }
    {  // rank 0 on n1, rank 3 on n2: same port for the whole step
        auto o0 = expect_task_ok(ddp_step("valid rank 0", valid_env(0)));
        auto o3 = expect_task_ok(ddp_step("valid rank 3", valid_env(3)));
        Step s = ddp_step("valid ranks agree", valid_env(3));
        check(get(o0.env, "MASTER_PORT") == get(o3.env, "MASTER_PORT"), s, o3,
              "ranks 0 and 3 disagree on MASTER_PORT");
        check(get(o3.env, "RANK") == "3" && get(o3.env, "MASTER_ADDR") == "n1", s, o3,
              "rank 3 values");
    }
    {  // --ddp=port=29533
        Step s = ddp_step("valid --ddp=port=29533", valid_env(2));
        s.optarg = "port=29533";
        auto o = expect_task_ok(s);
        check(get(o.env, "MASTER_PORT") == "29533", s, o,
              "MASTER_PORT=" + get(o.env, "MASTER_PORT"));
    }
    {  // the user's exported MASTER_PORT is kept
        Env e = valid_env(1);
        e["MASTER_PORT"] = "31000";
        auto o = expect_task_ok(ddp_step("valid, user MASTER_PORT kept", e));
        Step s = ddp_step("valid, user MASTER_PORT kept", e);
        check(get(o.env, "MASTER_PORT") == "31000", s, o, "MASTER_PORT overwritten");
    }
    {  // odd but valid node names: dots and dashes
        Env e = valid_env(0);
        e["SLURM_STEP_NODELIST"] = e["SLURM_NODELIST"] =
            "gpu-a.rack-1.example.org,gpu-b.rack-1.example.org";
        e["SLURMD_NODENAME"] = "gpu-a.rack-1.example.org";
        auto o = expect_task_ok(ddp_step("valid odd node names", e));
        Step s = ddp_step("valid odd node names", e);
        check(get(o.env, "MASTER_ADDR") == "gpu-a.rack-1.example.org", s, o,
              "MASTER_ADDR=" + get(o.env, "MASTER_ADDR"));
    }
    {  // exported but empty: empty means unset, the task gets the derived values
        const auto derived = expect_task_ok(ddp_step("valid rank 1 (reference)", valid_env(1)));
        Env e = valid_env(1);
        e["MASTER_PORT"] = "";
        e["MASTER_ADDR"] = "";
        e["OMP_NUM_THREADS"] = "";
        Step s = ddp_step("valid, exported empty MASTER_PORT/MASTER_ADDR/OMP_NUM_THREADS", e);
        auto o = expect_task_ok(s);
        check(get(o.env, "MASTER_PORT") == get(derived.env, "MASTER_PORT"), s, o,
              "MASTER_PORT='" + get(o.env, "MASTER_PORT") + "', derived '" +
                  get(derived.env, "MASTER_PORT") + "'");
        check(get(o.env, "MASTER_ADDR") == "n1", s, o,
              "MASTER_ADDR='" + get(o.env, "MASTER_ADDR") + "'");
        check(!get(o.env, "OMP_NUM_THREADS").empty(), s, o, "OMP_NUM_THREADS left empty");
    }
    {  // gpu-bind=closest reads the topology with hwloc: no GPU-driver component may load
        std::vector<std::string> opened;
        g_dlopened = &opened;
        Step s = ddp_step("valid --ddp=gpu-bind=closest loads no GPU driver", valid_env(1));
        s.optarg = "gpu-bind=closest";
        auto o = expect_task_ok(s);
        g_dlopened = nullptr;
        bool hwloc_ran = false;
        for (const auto& f : opened) {
            if (f.find("/hwloc/hwloc_") != std::string::npos) hwloc_ran = true;
            for (const char* bad : {"hwloc_cuda", "hwloc_nvml", "hwloc_opencl", "hwloc_rsmi",
                                    "hwloc_levelzero", "hwloc_gl", "libcuda", "libnvidia-ml",
                                    "libOpenCL", "librocm_smi", "libze_loader"}) {
                check(f.find(bad) == std::string::npos, s, o, "task_init dlopen'ed " + f);
            }
        }
        // The check means something only where hwloc loads components from plugins.
        if (!hwloc_ran) std::printf("  note: hwloc loaded no plugin; GPU-driver check vacuous\n");
        // The plugin loads libhwloc on first use (it is not linked).
        check(std::find(opened.begin(), opened.end(), "libhwloc.so.15") != opened.end(), s, o,
              "gpu-bind=closest did not load libhwloc");
    }
    {  // site default=on, no --ddp: the step gets DDP
        Step s;
        s.name = "site default=on without --ddp";
        s.plugin_args = {"default=on"};
        s.env = valid_env(1);
        s.env["SLURM_DDP_SECRET"] = std::string(64, 'a');
        expect_task_ok(s);
    }
    {  // 1-node 1-task step, SLURM_STEP_* absent: falls back to the job's variables
        Env e{{"SLURM_JOB_ID", "7"},      {"SLURM_STEPID", "0"},      {"SLURM_NTASKS", "1"},
              {"SLURM_NNODES", "1"},      {"SLURM_PROCID", "0"},      {"SLURM_LOCALID", "0"},
              {"SLURM_NODEID", "0"},      {"SLURM_NODELIST", "solo"}, {"SLURM_TASKS_PER_NODE", "1"},
              {"SLURMD_NODENAME", "solo"}};
        Step s = ddp_step("valid, job variables only", e);
        s.step_id = 0;
        auto o = expect_task_ok(s);
        check(get(o.env, "WORLD_SIZE") == "1" && get(o.env, "MASTER_ADDR") == "solo", s, o,
              "values");
    }
}

// --ddp=debug=DIR where another user planted the step's directory as a link: refused by name,
// nothing created behind the link.
void scenario_debug_dir_shared() {
    char tmpl[] = "/tmp/sddp-host-debug.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return;
    const std::string root = tmpl, shared = root + "/shared", victim = root + "/victim";
    ::mkdir(shared.c_str(), 0700);
    ::chmod(shared.c_str(), 01777);
    ::mkdir(victim.c_str(), 0700);
    (void)!::symlink(victim.c_str(), (shared + "/4242.3").c_str());
    Env e = valid_env(1);
    e["SLURM_DDP_SECRET"] = std::string(64, 'a');
    Step s = ddp_step("--ddp=debug in a shared directory with a planted link", e);
    s.optarg = "debug=" + shared;
    expect_task_error(s, shared + " is writable by other users");
    Step site = s;
    site.name = "site default debug=DIR in a shared directory";
    site.option_given = false;
    site.optarg.reset();
    site.plugin_args = {"default=on", "debug=" + shared};
    const Outcome o = run(site);
    check_common(site, o);
    check(o.task_init == 0, site, o, "the site default failed a step that did not ask");
    const bool victim_empty = ::rmdir(victim.c_str()) == 0;
    check(victim_empty, s, o, "something was created behind the planted link");
    ::unlink((shared + "/4242.3").c_str());
    ::rmdir(shared.c_str());
    ::rmdir(victim.c_str());
    ::rmdir(root.c_str());
}

// gres.conf Flags=amd_gpu_env / intel_gpu_env: Slurm lists the GPUs in ROCR_VISIBLE_DEVICES or
// ZE_AFFINITY_MASK and sets no CUDA_VISIBLE_DEVICES. The plugin binds through that variable with
// the same policies and never invents CUDA_VISIBLE_DEVICES.
void scenarios_gpu_kinds() {
    for (const char* var : {"ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"}) {
        Env e = valid_env(1);  // local rank 1 of 2 on n1
        e[var] = "0,1";
        e["SLURM_STEP_GPUS"] = "0,1";
        e["SLURM_GPUS_ON_NODE"] = "2";
        const std::string what = std::string(var) + " from Slurm";
        auto o = expect_task_ok(ddp_step(what + ", gpu-bind=local", e));
        Step s = ddp_step(what + ", gpu-bind=local", e);
        check(get(o.env, var) == "0,1", s, o, std::string(var) + "=" + get(o.env, var));
        check(get(o.env, "SLURM_DDP_DEVICE") == "1", s, o,
              "SLURM_DDP_DEVICE=" + get(o.env, "SLURM_DDP_DEVICE"));
        check(o.env.count("CUDA_VISIBLE_DEVICES") == 0, s, o, "CUDA_VISIBLE_DEVICES invented");
        Step single = ddp_step(what + ", gpu-bind=single", e);
        single.optarg = "gpu-bind=single";
        auto os = expect_task_ok(single);
        check(get(os.env, var) == "1", single, os, std::string(var) + "=" + get(os.env, var));
        check(get(os.env, "SLURM_DDP_DEVICE") == "0", single, os,
              "SLURM_DDP_DEVICE=" + get(os.env, "SLURM_DDP_DEVICE"));
        check(os.env.count("CUDA_VISIBLE_DEVICES") == 0, single, os,
              "CUDA_VISIBLE_DEVICES invented");
    }
}

}  // namespace plugin_host
