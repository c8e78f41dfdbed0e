// SPDX-License-Identifier: Apache-2.0
// What happens to a --ddp step while it runs, seen from this node's slurmstepd.
//
// Slurm tells no plugin that a step was signalled (scancel --signal, the time limit, --signal=T,
// preemption, srun's Ctrl-C), yet fail fast and requeue must know: a rank that saves on SIGTERM
// and exits 1 is part of a shutdown, not a failure, and SIGUSR1 asks for a requeue. So local
// task 0 leaves a watcher process in the step, a sibling of the tasks (CLONE_PARENT), which Slurm
// signals with them; it reports each step-wide signal over a socket pair to a thread of the
// plugin in slurmstepd. The thread lives in slurmstepd's own process, started in init_post_opt,
// so it outlives the hooks that Slurm 24.05+ runs in short-lived clones under
// `SlurmdParameters=contain_spank`, and runs fail fast's delayed kill request there.
//
// The watcher is the user's process, so what it says is taken as a claim about the user's own
// step: a signal it reports can stop fail fast or requeue that step, nothing else. Its pid comes
// from the kernel (SCM_CREDENTIALS), never from its words. It ends when the step's tasks on this
// node have ended (told by slurmstepd), or once task 0's own process has exited while the other
// tasks are done: under `srun --wait-for-children` task 0 counts as running while anything is
// left in its cgroup, the watcher included.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <functional>

namespace sddp::plugin {

// init_post_opt of a --ddp step that needs it (slurmstepd's own process, before the tasks are
// forked): the socket pair and the thread. False, logged, when either cannot be made: the step
// then runs without the watch (signals unseen, kills sent from task_exit).
bool start_step_watch(std::uint32_t local_tasks, uid_t job_uid);

// Whether start_step_watch succeeded in this slurmstepd.
bool step_watch_running();

// task_init of local task 0, in the task before it execs: start the watcher.
void start_watcher();

// The first step-wide signal the step got on this node (reported by the watcher, or still
// waiting for it to read), 0 when none.
int step_signal();

// step_signal(), giving the watcher up to `grace` to report a signal first. A task that ends
// on a step-wide signal can be seen ending before the watcher's note arrives (the watcher has
// read the signal and not yet written it, or has not been scheduled since); a failure's report
// waits that long before it calls a shutdown a failure.
int step_signal_within(std::chrono::milliseconds grace);

// Whether the step got SIGUSR1 or SIGUSR2 (requeue's early signal).
bool checkpoint_signalled();

// Whether the watcher is gone without being told: killed with the step (every process of a
// cancelled step gets SIGKILL), so the step is ending already.
bool watcher_gone();

// task_exit of local task `local_id`: when every task of this node has ended, the watcher is
// told to go.
void note_task_end(std::uint32_t local_id);

// Runs `action` on the watch thread `delay` from now (one pending action at a time; false when
// one is pending or no thread runs). stop_step_watch waits for a pending action to run.
bool run_later(std::chrono::milliseconds delay, std::function<void()> action);

// slurm_spank_exit: waits for a pending action, stops and joins the thread, closes the sockets.
void stop_step_watch();

}  // namespace sddp::plugin
