// SPDX-License-Identifier: Apache-2.0
// Steps the plugin must leave alone, and broken, special, injected or random inputs it must refuse
// by name.
#include "host.hpp"

namespace plugin_host {

// (b) steps without --ddp: nothing happens whatever the environment or plugin arguments.
void scenarios_untouched(std::mt19937_64& rng) {
    const std::vector<std::vector<std::string>> plugin_args{
        {},
        {"junk"},
        {"port=0", "gpu-bind=sideways", "=", "==", ""},
        {"default=maybe"},
        {"port-range=9-1"},
        {std::string(1 << 20, 'x')},                 // one 1 MiB argument
        std::vector<std::string>(20000, "verbose"),  // many arguments
        {random_bytes(rng, 4096)},
        {"default=on", "default=off", "default=on"},  // contradictory: an error, not on
        {"default=on", "port=70000"},                 // invalid: never turns DDP on
    };
    std::vector<Env> envs{
        {},
        valid_env(1),
        {{"SLURM_PROCID", "abc"}, {"SLURM_STEP_NODELIST", "a[0-999999999]"}},
        {{"SLURM_PROCID", std::to_string(1ull << 40)},
         {"SLURM_STEP_TASKS_PER_NODE", "2(x"},
         {"MASTER_PORT", "not-a-port"}},
        {{"SLURM_STEP_NODELIST", std::string(1 << 20, 'n')}},
        {{"SLURM_JOB_ID", random_bytes(rng, 300)},
         {"SLURM_STEP_NODELIST", random_bytes(rng, 5000)}},
    };
    int n = 0;
    for (const auto& args : plugin_args) {
        for (const auto& env : envs) {
            for (auto ctx : {S_CTX_REMOTE, S_CTX_LOCAL, S_CTX_ALLOCATOR}) {
                Step s;
                s.name = "untouched #" + std::to_string(n++) + " ctx=" + std::to_string(ctx) +
                         " args[0]=" + (args.empty() ? "" : shorten(args[0], 30));
                s.context = ctx;
                s.plugin_args = args;
                s.env = env;
                expect_untouched(s);
            }
        }
    }
    {  // --ddp=off
        Step s = ddp_step("--ddp=off", valid_env(1));
        s.optarg = "off";
        expect_untouched(s);
        s.name = "--ddp=off over site default=on";
        s.plugin_args = {"default=on"};
        expect_untouched(s);
    }
    {  // srun made a secret in case this node's plugstack turns --ddp on; it does not here
        Step s;
        s.name = "secret from srun, no --ddp on this node";
        s.env = valid_env(1);
        s.env["SLURM_DDP_SECRET"] = std::string(64, 'a');
        const Outcome o = run(s);
        check_common(s, o);
        Env want = s.env;
        want.erase("SLURM_DDP_SECRET");
        check(o.task_init == 0 && o.env == want, s, o,
              "the secret must be dropped from a step without --ddp:" + env_diff(want, o.env));
        // Where this node's plugstack says default=on, the step gets --ddp and keeps it.
        s.name = "secret from srun, default=on on this node";
        s.plugin_args = {"default=on"};
        const Outcome on = run(s);
        check(on.task_init == 0 && on.env.count("SLURM_DDP_SECRET") == 1 &&
                  on.env.at("SLURM_DDP_SECRET") == std::string(64, 'a'),
              s, on, "a --ddp step lost its secret");
    }
    {  // other contexts (slurmd, prolog/epilog, error): nothing at all, even with --ddp
        for (auto ctx : {S_CTX_SLURMD, S_CTX_JOB_SCRIPT, S_CTX_ERROR}) {
            Step s = ddp_step("--ddp in context " + std::to_string(ctx), valid_env(1));
            s.context = ctx;
            const Outcome o = run(s);
            check_common(s, o);
            check(o.post_opt == 0 && o.task_init == 0 && o.env == s.env, s, o, "touched");
            check(g.options.empty(), s, o, "registered an option in a context without options");
        }
    }
}

// (c) --ddp steps with malformed, missing or oversized Slurm variables.
void scenarios_bad_slurm_env(std::mt19937_64& rng) {
    struct Case {
        std::string var;
        std::optional<std::string> value;  // nullopt: unset
        std::string needle;                // what the error must name
    };
    const std::string big(1 << 20, '7');
    std::vector<Case> cases{
        {"SLURM_PROCID", "abc", "SLURM_PROCID"},
        {"SLURM_PROCID", "-1", "SLURM_PROCID"},
        {"SLURM_PROCID", std::to_string(1ull << 40), "SLURM_PROCID"},
        {"SLURM_PROCID", "4", "SLURM_PROCID"},
        {"SLURM_PROCID", "", "SLURM_PROCID"},
        {"SLURM_PROCID", " 1", "SLURM_PROCID"},
        {"SLURM_PROCID", "0x1", "SLURM_PROCID"},
        {"SLURM_PROCID", "1.0", "SLURM_PROCID"},
        {"SLURM_PROCID", "99999999999999999999999999999999", "SLURM_PROCID"},
        {"SLURM_PROCID", std::nullopt, "SLURM_PROCID"},
        {"SLURM_PROCID", std::string((1 << 20) - 1, '1'), "SLURM_PROCID"},
        {"SLURM_LOCALID", "2", "SLURM_LOCALID"},
        {"SLURM_NODEID", "2", "SLURM_NODEID"},
        {"SLURM_NODEID", std::nullopt, "SLURM_NODEID"},
        {"SLURM_JOB_ID", std::nullopt, "SLURM_JOB_ID"},
        {"SLURM_JOB_ID", "4294967296", "SLURM_JOB_ID"},
        {"SLURM_STEP_NUM_TASKS", "0", "SLURM_STEP_NUM_TASKS"},
        {"SLURM_STEP_NUM_TASKS", "16777217", "SLURM_STEP_NUM_TASKS"},
        {"SLURM_STEP_NUM_NODES", "3", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "a[0-999999999]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[1-2", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[2-1]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n1,,n2", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n]1[,n2", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[1-2][3-4]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n1", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[1-3]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", "n[" + std::string(100000, '1') + "-2]", "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_NODELIST", std::string((1 << 20) - 1, 'n'), "SLURM_STEP_NODELIST"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x0)", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "abc", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x4294967296)", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "-1,5", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "1,3", "SLURM_STEP_TASKS_PER_NODE"},  // LOCALID 1 on node 0
        {"SLURM_STEP_TASKS_PER_NODE", "2(x3)", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_STEP_TASKS_PER_NODE", "4294967295,4294967295", "SLURM_STEP_TASKS_PER_NODE"},
        {"SLURM_HET_SIZE", "junk", "SLURM_HET_SIZE"},
        {"SLURM_HET_SIZE", "129", "SLURM_HET_SIZE"},
        {"SLURM_DIST_PLANESIZE", "junk", "SLURM_DIST_PLANESIZE"},
        {"SLURM_CPUS_PER_TASK", "-3", "SLURM_CPUS_PER_TASK"},
        {"MASTER_PORT", "not-a-port", "MASTER_PORT"},
        {"MASTER_PORT", "0", "MASTER_PORT"},
        {"MASTER_PORT", "65536", "MASTER_PORT"},
    };
    for (const char* var : {"SLURM_PROCID", "SLURM_STEP_NODELIST", "SLURM_STEP_TASKS_PER_NODE",
                            "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID"}) {
        for (std::size_t len : {1u, 17u, 300u, 70000u}) {
            cases.push_back({var, random_bytes(rng, len), var});
        }
    }
    for (const auto& c : cases) {
        Env e = valid_env(1);
        if (c.value)
            e[c.var] = *c.value;
        else
            e.erase(c.var);
        // Without a usable step value Slurm's job value is used; make it wrong too, so that the
        // step cannot succeed by falling back (the fallback itself is covered below).
        expect_task_error(ddp_step(c.var + "=" + (c.value ? shorten(*c.value, 40) : "<unset>"), e),
                          c.needle);
    }
    // rank 0 whose node is not the first of the node list: every other rank would wait forever
    {
        Env e = valid_env(0);
        e["SLURMD_NODENAME"] = "n2";
        expect_task_error(ddp_step("rank 0 on the wrong node", e), "rank 0 runs on node");
    }
    {  // nothing at all in the environment
        expect_task_error(ddp_step("empty environment", Env{}), "SLURM_JOB_ID");
    }
    // The step's variable unreadable (too long for the plugin's 1 MiB cap) and the job's absent:
    // the error must still say which variable.
    {
        Env e = valid_env(1);
        e["SLURM_STEP_NODELIST"] = big;
        e.erase("SLURM_NODELIST");
        e.erase("SLURM_JOB_NODELIST");
        // "SLURM_STEP_NODELIST", not "NODELIST": the old message, "SLURM_NODELIST is not set",
        // named the job's variable after treating the oversized one as absent.
        expect_task_error(ddp_step("SLURM_STEP_NODELIST of 1 MiB, no job list", e),
                          "SLURM_STEP_NODELIST");
    }
}

// The oversized step variable with the job's list present: refused naming the step variable.
// A value over the plugin's 1 MiB read cap once read as "absent", so the step silently ran with
// the job's node list (task_init 0); that fallback is the regression this checks for.
void scenario_oversized_fallback() {
    Env e = valid_env(1);
    e["SLURM_STEP_NODELIST"] = std::string(1 << 20, 'n');
    Step s = ddp_step("SLURM_STEP_NODELIST of 1 MiB, job list present", e);
    const Outcome o = run(s);
    check_common(s, o);
    check(o.task_init == -1, s, o,
          "task_init must refuse an oversized SLURM_STEP_NODELIST, not fall back to "
          "SLURM_NODELIST (MASTER_ADDR=" +
              get(o.env, "MASTER_ADDR") + ")");
    check(logged_error_naming(o, "SLURM_STEP_NODELIST"), s, o,
          "no error naming SLURM_STEP_NODELIST");
    check(logged_error_naming(o, "longer than 1 MiB"), s, o,
          "the error does not say the value is longer than 1 MiB");
    check(o.env == s.env, s, o, "environment changed on failure:" + env_diff(s.env, o.env));
}

// (d) special steps: untouched even with --ddp.
void scenarios_special_steps() {
    const std::vector<std::pair<std::string, std::uint32_t>> ids{
        {"batch", 0xfffffffbu},   {"extern", 0xfffffffcu},        {"interactive", 0xfffffffau},
        {"pending", 0xfffffffdu}, {"first special", 0xfffffff0u}, {"max", 0xffffffffu}};
    for (const auto& [name, id] : ids) {
        Env e = valid_env(1);
        e["SLURM_STEP_ID"] = e["SLURM_STEPID"] = std::to_string(id);
        Step s = ddp_step(name + " step with --ddp", e);
        s.step_id = id;
        expect_untouched(s);
        s.name = name + " step with --ddp and a broken environment";
        s.env["SLURM_PROCID"] = "abc";
        expect_untouched(s);
    }
    {  // spank_get_item(S_JOB_STEPID) fails: treated as a step not to touch
        Step s = ddp_step("step id unavailable", valid_env(1));
        s.step_id = std::nullopt;
        expect_untouched(s);
    }
    // srun makes a secret for every step, the interactive one (salloc's `srun --interactive`)
    // too: a step the plugin does not set up must not keep it in the user's shell.
    for (const auto& [name, id] : ids) {
        for (const bool with_ddp : {false, true}) {
            Env e = valid_env(1);
            e["SLURM_STEP_ID"] = e["SLURM_STEPID"] = std::to_string(id);
            e["SLURM_DDP_SECRET"] = std::string(64, 'a');
            Step s = ddp_step(name + " step keeps no secret" + (with_ddp ? " (--ddp)" : ""), e);
            s.option_given = with_ddp;
            s.plugin_args = {"default=on"};
            s.step_id = id;
            const Outcome o = run(s);
            check_common(s, o);
            Env want = e;
            want.erase("SLURM_DDP_SECRET");
            check(o.task_init == 0 && o.env == want, s, o,
                  "the secret must be dropped, nothing else changed:" + env_diff(want, o.env));
        }
    }
}

// Injected values: shell syntax in MASTER_ADDR, a 10 MB secret, control characters in a --ddp
// value. Each is a clear error naming it; nothing is set, nothing launched, nothing cut short.
void scenarios_injected_values() {
    for (const std::string addr :
         {"$(touch /tmp/sddp-pwned)", "n1;reboot", "`id`", "n1 n2", "n1\nMASTER_PORT=1"}) {
        Env e = valid_env(1);
        e["MASTER_ADDR"] = addr;
        expect_task_error(ddp_step("MASTER_ADDR=" + shorten(addr, 30), e), "MASTER_ADDR='");
    }
    {
        Env e = valid_env(1);
        e["SLURM_DDP_SECRET"] = std::string(10 << 20, 'a');
        expect_task_error(ddp_step("SLURM_DDP_SECRET of 10 MB", e),
                          "SLURM_DDP_SECRET is longer than 1 MiB");
        e["SLURM_DDP_SECRET"] = std::string(65, 'a');
        expect_task_error(ddp_step("SLURM_DDP_SECRET of 65 characters", e),
                          "SLURM_DDP_SECRET has 65 characters");
    }
    for (const std::string v :
         {"addr=n1\n", "debug=/tmp/a\nb", "addr-suffix=-ib\x1b[2J", "port=29500\r", "verbose\x1b",
          "gpu-bind=local\x7f", "rank-order=node\x01", "timeout=30\x0b"}) {
        Step s;
        s.name = "option with a control character: " + shorten(v, 30);
        s.context = S_CTX_LOCAL;
        s.option_given = true;
        s.optarg = v;
        const Outcome o = run(s);
        check_common(s, o);
        check(o.option && *o.option == -1 && o.post_opt == -1 && !o.secret, s, o,
              "srun must refuse the launch");
        check(logged_error_naming(o, "\\x"), s, o, "the error does not show the character");
    }
}

// (f) random inputs: no crash; without --ddp nothing changes.
void scenario_random(std::mt19937_64& rng, int iterations) {
    const std::vector<std::string> vars{"SLURM_JOB_ID",
                                        "SLURM_STEP_ID",
                                        "SLURM_STEPID",
                                        "SLURM_STEP_NUM_TASKS",
                                        "SLURM_NTASKS",
                                        "SLURM_STEP_NUM_NODES",
                                        "SLURM_NNODES",
                                        "SLURM_PROCID",
                                        "SLURM_LOCALID",
                                        "SLURM_NODEID",
                                        "SLURM_STEP_NODELIST",
                                        "SLURM_NODELIST",
                                        "SLURM_STEP_TASKS_PER_NODE",
                                        "SLURM_TASKS_PER_NODE",
                                        "SLURMD_NODENAME",
                                        "SLURM_DISTRIBUTION",
                                        "SLURM_HOSTFILE",
                                        "SLURM_STEP_RESV_PORTS",
                                        "SLURM_HET_SIZE",
                                        "SLURM_NODELIST_HET_GROUP_0",
                                        "SLURM_DIST_PLANESIZE",
                                        "SLURM_CPUS_PER_TASK",
                                        "MASTER_ADDR",
                                        "MASTER_PORT",
                                        "CUDA_VISIBLE_DEVICES",
                                        "SLURM_STEP_GPUS",
                                        "SLURM_JOB_GPUS",
                                        "SLURM_GPUS_ON_NODE",
                                        "SLURM_DDP_SECRET"};
    const std::vector<std::string> atoms{"0",           "1",
                                         "2",           "3",
                                         "4",           "-1",
                                         "abc",         "",
                                         "4294967295",  "4294967296",
                                         "n[1-2]",      "n[1-3]",
                                         "n1,n2",       "2(x2)",
                                         "1,3",         "2(x",
                                         "block",       "cyclic",
                                         "arbitrary",   "n1",
                                         "n2",          "0,1",
                                         "GPU-1234",    "/nonexistent/hostfile",
                                         "12000-12010", "a[0-999999999]",
                                         "[",           "]",
                                         ",",           "(x",
                                         "port=29500",  "off",
                                         "on",          "gpu-bind=closest",
                                         "timeout=5",   "verbose",
                                         "=",           "x=y",
                                         "default=off", "gpu-share",
                                         "nccl-hints",  "override",
                                         "addr=h",      "addr-suffix=-ib"};
    auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
    auto value = [&]() -> std::string {
        switch (rng() % 6) {
            case 0:
                return random_bytes(rng, rng() % 64);
            case 1:
                return pick(atoms) + pick(atoms);
            case 2:
                return std::to_string(rng() % 8);
            default:
                return pick(atoms);
        }
    };
    int ddp_ok = 0, ddp_fail = 0;
    for (int i = 0; i < iterations; ++i) {
        Step s;
        s.name = "random #" + std::to_string(i);
        const auto r = rng() % 10;
        s.context = r < 7 ? S_CTX_REMOTE : (r < 9 ? S_CTX_LOCAL : S_CTX_ALLOCATOR);
        s.env = (rng() % 4) ? valid_env(static_cast<int>(rng() % 4)) : Env{};
        const int edits = static_cast<int>(rng() % 4);
        for (int k = 0; k < edits; ++k) {
            if (rng() % 5 == 0)
                s.env.erase(pick(vars));
            else
                s.env[pick(vars)] = value();
        }
        const int nargs = (rng() % 2) ? 0 : static_cast<int>(rng() % 4);
        for (int k = 0; k < nargs; ++k) s.plugin_args.push_back(value());
        s.option_given = rng() % 2;
        if (s.option_given && rng() % 3) s.optarg = value();
        if (rng() % 8 == 0)
            s.step_id = 0xfffffff0u + static_cast<std::uint32_t>(rng() % 16);
        else
            s.step_id = static_cast<std::uint32_t>(rng() % 5);

        const Outcome o = run(s);
        check_common(s, o);
        check(o.task_init == 0 || o.task_init == -1, s, o, "task_init returned another value");
        check(o.post_opt == 0 || o.post_opt == -1, s, o, "init_post_opt returned another value");
        bool site_may_enable = false;
        for (const auto& a : s.plugin_args)
            if (a.find("default") != std::string::npos || a.find("on") != std::string::npos)
                site_may_enable = true;
        check(s.option_given || (o.post_opt == 0 && o.task_init == 0), s, o,
              "failed a step that did not ask for --ddp");
        if (!s.option_given && !site_may_enable) {
            // Only srun's secret goes (made in case the node turned --ddp on; it did not).
            Env want = s.env;
            if (s.context == S_CTX_REMOTE) want.erase("SLURM_DDP_SECRET");
            check(o.env == want, s, o,
                  "environment changed without --ddp:" + env_diff(want, o.env));
            check(o.post_opt == 0 && o.task_init == 0, s, o, "failed without --ddp");
            check(plugin_time_lines(o).empty(), s, o, "logged its time without --ddp");
            if (s.context != S_CTX_LOCAL) check(!o.secret, s, o, "secret without --ddp");
        }
        if (s.step_id && *s.step_id >= 0xfffffff0u) {
            Env want = s.env;
            if (s.context == S_CTX_REMOTE) want.erase("SLURM_DDP_SECRET");
            check(o.env == want && o.task_init == 0, s, o, "special step touched");
        }
        if (o.task_init == -1) {
            ++ddp_fail;
            check(o.env == s.env, s, o, "environment changed by a failing task_init");
            check(std::any_of(o.log.begin(), o.log.end(),
                              [](const std::string& l) { return l.rfind("error: ", 0) == 0; }),
                  s, o, "task_init failed without an error message");
        } else if (s.context == S_CTX_REMOTE && o.env != s.env) {
            ++ddp_ok;
        }
    }
    std::printf("random: %d iterations, %d --ddp tasks set up, %d refused with an error\n",
                iterations, ddp_ok, ddp_fail);
}

}  // namespace plugin_host
