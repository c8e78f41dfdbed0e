// SPDX-License-Identifier: Apache-2.0
// The --ddp option in srun and sbatch, a missing step secret, and site defaults that never fail a
// step.
#include "host.hpp"

namespace plugin_host {

// (e) the --ddp option in srun/sbatch: bad values refuse the launch; good ones make a secret.
void scenarios_options() {
    const std::vector<std::string> bad{"port=0",
                                       "port=abc",
                                       "port=65536",
                                       "port=",
                                       "bogus",
                                       "on,off",
                                       "=",
                                       ",,,",
                                       "gpu-bind=sideways",
                                       "timeout=-1",
                                       "addr",
                                       "addr=a,addr-suffix=b",
                                       "port=1,port-range=1-2",
                                       std::string(1 << 20, 'x'),
                                       "verbose=maybe",
                                       "default=on",
                                       std::string("port=1\n2"),
                                       "\x01\x02\xff"};
    for (auto ctx : {S_CTX_LOCAL, S_CTX_ALLOCATOR}) {
        for (const auto& v : bad) {
            Step s;
            s.name = "bad optarg '" + shorten(v, 30) + "' ctx=" + std::to_string(ctx);
            s.context = ctx;
            s.option_given = true;
            s.optarg = v;
            const Outcome o = run(s);
            check_common(s, o);
            check(o.option && *o.option == -1, s, o, "option callback must return -1");
            check(o.post_opt == -1, s, o, "init_post_opt must refuse the launch");
            check(std::any_of(o.log.begin(), o.log.end(),
                              [](const std::string& l) { return l.rfind("error: ", 0) == 0; }),
                  s, o, "no error logged");
            check(!o.secret, s, o, "secret made for a refused step");
        }
        // In slurmstepd a bad value does not fail the callback; task_init reports it.
    }
    for (const auto& v : bad) {
        Step s = ddp_step("bad optarg '" + shorten(v, 30) + "' in slurmstepd", valid_env(1));
        s.optarg = v;
        const Outcome o = run(s);
        check_common(s, o);
        check(o.option && *o.option == 0, s, o, "remote option callback must return 0");
        check(o.task_init == -1, s, o, "task_init must fail");
        check(o.env == s.env, s, o, "environment changed:" + env_diff(s.env, o.env));
        check(o.task_stderr.find("slurm-ddp: error:") != std::string::npos, s, o,
              "no error on the task's stderr");
    }
    for (const std::optional<std::string>& v :
         {std::optional<std::string>{}, std::optional<std::string>{"port=29500"},
          std::optional<std::string>{"gpu-bind=none,verbose,timeout=30"},
          std::optional<std::string>{"on"}}) {
        Step s;
        s.name = "good optarg '" + v.value_or("<none>") + "' in srun";
        s.context = S_CTX_LOCAL;
        s.option_given = true;
        s.optarg = v;
        const Outcome o = run(s);
        check_common(s, o);
        check(o.option && *o.option == 0 && o.post_opt == 0, s, o, "must be accepted");
        check(o.secret && o.secret->size() == 64 &&
                  o.secret->find_first_not_of("0123456789abcdef") == std::string::npos,
              s, o, "SLURM_DDP_SECRET is not 64 hex digits");
        expect_plugin_time(s, o, "srun", {"init", "option", "init_post_opt"}, "");
        s.name = "good optarg '" + v.value_or("<none>") + "' in sbatch";
        s.context = S_CTX_ALLOCATOR;
        const Outcome a = run(s);
        check_common(s, a);
        check(a.post_opt == 0 && plugin_time_lines(a).empty(), s, a,
              "sbatch must accept and not log a plugin time");
    }
    {  // broken plugin arguments fail only steps that ask for --ddp, in srun, before launch
        Step s;
        s.name = "--ddp with broken plugin arguments in srun";
        s.context = S_CTX_LOCAL;
        s.option_given = true;
        s.plugin_args = {"port=99999"};
        const Outcome o = run(s);
        check_common(s, o);
        check(o.post_opt == -1 && logged_error_naming(o, "port"), s, o,
              "must refuse, naming the argument");
        Step r = ddp_step("--ddp with broken plugin arguments in slurmstepd", valid_env(1));
        r.plugin_args = {"port=99999"};
        expect_task_error(r, "port");
    }
}

// srun when getrandom or setenv fails: only a step that asked for --ddp may be refused.
void scenarios_srun_without_secret() {
    for (const bool random_fails : {true, false}) {
        for (const std::string asked : {"no --ddp", "site default=on", "--ddp"}) {
            Step s;
            s.context = S_CTX_LOCAL;
            s.name = std::string("srun, ") + (random_fails ? "getrandom" : "setenv") + " fails, " +
                     asked;
            if (asked == "site default=on") s.plugin_args = {"default=on"};
            s.option_given = asked == "--ddp";
            (random_fails ? g_fail_getrandom : g_fail_setenv) = true;
            const Outcome o = run(s);
            g_fail_getrandom = g_fail_setenv = false;
            check_common(s, o);
            check(!o.secret, s, o, "a secret although making it failed");
            const bool errors = std::any_of(o.log.begin(), o.log.end(), [](const std::string& l) {
                return l.rfind("error: ", 0) == 0;
            });
            if (s.option_given) {
                check(o.post_opt == -1, s, o, "a --ddp step launched without its secret");
                check(logged_error_naming(o, random_fails ? "getrandom" : "SLURM_DDP_SECRET"), s, o,
                      "the error does not say what failed");
            } else {
                check(o.post_opt == 0 && !errors, s, o,
                      "srun refused (or complained about) a step that did not ask for --ddp");
            }
        }
    }
    {  // the site default on the node then stays out of the step srun launched without a secret
        Step s;
        s.name = "site default=on, task without a secret";
        s.plugin_args = {"default=on"};
        s.env = valid_env(1);
        const Outcome o = run(s);
        check_common(s, o);
        check(o.task_init == 0 && o.env == s.env && o.task_stderr.empty(), s, o,
              "a site-default task without a secret was touched:" + env_diff(s.env, o.env));
    }
}

// The site default (default=on) may add variables to a step that never asked, or stay out where
// it cannot; it never fails it. The same steps with --ddp fail loudly.
void scenarios_site_default_never_fails() {
    struct Case {
        std::string name;
        Env env;
        std::string needle;  // what the --ddp error names
    };
    std::vector<Case> cases;
    {  // srun -n2 --gres=gpu:1 true: two tasks, one GPU on the node
        Env e = valid_env(1);
        e["SLURM_STEP_NUM_TASKS"] = e["SLURM_NTASKS"] = "2";
        e["SLURM_STEP_NUM_NODES"] = e["SLURM_NNODES"] = "1";
        e["SLURM_STEP_NODELIST"] = e["SLURM_NODELIST"] = e["SLURM_JOB_NODELIST"] = "n1";
        e["SLURM_STEP_TASKS_PER_NODE"] = e["SLURM_TASKS_PER_NODE"] = "2";
        e["SLURM_NODEID"] = "0";
        e["SLURMD_NODENAME"] = "n1";
        e["CUDA_VISIBLE_DEVICES"] = e["SLURM_STEP_GPUS"] = e["SLURM_JOB_GPUS"] = "0";
        cases.push_back({"more tasks than GPUs", e, "GPU"});
    }
    {  // -m arbitrary with a host file the node cannot read
        Env e = valid_env(1);
        e["SLURM_DISTRIBUTION"] = "arbitrary";
        e["SLURM_HOSTFILE"] = "/nonexistent/hostfile";
        cases.push_back({"-m arbitrary", e, "SLURM_HOSTFILE"});
    }
    for (auto& c : cases) {
        c.env["SLURM_DDP_SECRET"] = std::string(64, 'a');
        Step explicit_ddp = ddp_step(c.name + " with --ddp", c.env);
        expect_task_error(explicit_ddp, c.needle);
        Step s;
        s.name = c.name + " under site default=on";
        s.plugin_args = {"default=on"};
        s.env = c.env;
        const Outcome o = run(s);
        check_common(s, o);
        Env want = c.env;
        want.erase("SLURM_DDP_SECRET");
        check(o.task_init == 0, s, o, "the site default failed a step that did not ask");
        check(o.env == want, s, o,
              "changed more than dropping the secret:" + env_diff(want, o.env));
        check(o.task_stderr.empty(), s, o, "wrote to the task's stderr");
        check(!logged_error_naming(o, ""), s, o, "logged an error");
        check(std::any_of(o.log.begin(), o.log.end(),
                          [&](const std::string& l) {
                              return l.rfind("verbose: ", 0) == 0 &&
                                     l.find("site default") != std::string::npos &&
                                     l.find(c.needle) != std::string::npos;
                          }),
              s, o, "no verbose line saying why the step runs without DDP");
    }
    {  // the derived MASTER_PORT busy on rank 0's node
        Env e = valid_env(0);
        e["SLURM_DDP_SECRET"] = std::string(64, 'a');
        Step probe = ddp_step("busy port: the derived port", e);
        const Outcome first = expect_task_ok(probe);
        const long port = std::strtol(get(first.env, "MASTER_PORT").c_str(), nullptr, 10);
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<std::uint16_t>(port));
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
        if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
            ::listen(fd, 1) == 0) {
            expect_task_error(ddp_step("busy derived port with --ddp", e), std::to_string(port));
            Step s;
            s.name = "busy derived port under site default=on";
            s.plugin_args = {"default=on"};
            s.env = e;
            const Outcome o = run(s);
            check_common(s, o);
            Env want = e;
            want.erase("SLURM_DDP_SECRET");
            check(o.task_init == 0 && o.env == want && o.task_stderr.empty(), s, o,
                  "the site default failed or half set up rank 0:" + env_diff(want, o.env));
        } else {
            std::printf("  note: cannot hold port %ld; busy-port case skipped\n", port);
        }
        if (fd >= 0) ::close(fd);
    }
}

}  // namespace plugin_host
