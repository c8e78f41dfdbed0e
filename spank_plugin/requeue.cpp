// SPDX-License-Identifier: Apache-2.0
#include "requeue.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "core/options/contract.hpp"
#include "plugin_log.hpp"

#include "slurm_api.hpp"

namespace sddp::plugin {
namespace {

// Node-local and shared by all steps of a job (job_container/tmpfs gives each job its own).
std::string marker_path(std::uint32_t job_id) {
    return "/dev/shm/slurm-ddp-requeue." + std::to_string(job_id);
}

std::optional<std::string> task_env(spank_t sp, const char* name) {
    char buf[64] = {};
    if (spank_getenv(sp, name, buf, sizeof buf) != ESPANK_SUCCESS) return std::nullopt;
    return std::string(buf);
}

// The watcher is made a sibling of the task (CLONE_PARENT: a child of slurmstepd), because
// Slurm forwards a step's signals other than SIGKILL only to slurmstepd's own children under
// proctrack/cgroup, and under proctrack/linuxproc to descendants not named like slurmstepd, so it
// gets a name of its own. It dies with slurmstepd and is killed with the step. Only
// async-signal-safe calls in it: the task was forked from a threaded slurmstepd.
void start_watcher(const std::string& path) {
    const pid_t stepd = getppid();
    const long pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
    if (pid < 0) {
        log_verbose("requeue: cannot start the signal watcher: clone failed");
        return;
    }
    if (pid > 0) return;

    sigset_t wanted;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGUSR1);
    sigaddset(&wanted, SIGUSR2);
    sigprocmask(SIG_BLOCK, &wanted, nullptr);
    // An ignored signal is discarded even while blocked: make sure sigwait can see it.
    (void)signal(SIGUSR1, SIG_DFL);
    (void)signal(SIGUSR2, SIG_DFL);
    prctl(PR_SET_NAME, "slurm-ddp-watch", 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != stepd) _exit(0);
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(null_fd, 2);
    }
    // Hold none of the task's other descriptors (sockets, pipes) open behind its back.
    const long max_fd = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); ++fd)
        close(static_cast<int>(fd));

    int sig = 0;
    if (sigwait(&wanted, &sig) != 0) _exit(1);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        const char* text = sig == SIGUSR1 ? "SIGUSR1\n" : "SIGUSR2\n";
        (void)!write(fd, text, 8);
        close(fd);
    }
    _exit(0);
}

// slurm_requeue took a job id up to 25.x and a slurm_step_id_t since 26.05.
template <typename RequeueFn>
int requeue_job(RequeueFn requeue, std::uint32_t job_id) {
    if constexpr (std::is_invocable_v<RequeueFn, std::uint32_t, std::uint32_t>) {
        return requeue(job_id, 0u);
    } else {
        slurm_step_id_t id{};
        id.job_id = job_id;
        id.step_id = NO_VAL;
        id.step_het_comp = NO_VAL;
        return requeue(id, 0u);
    }
}

}  // namespace

void on_requeue_task_init(spank_t sp, const DdpOptions& opts) {
    // SLURM_DDP_RESTARTS comes with the rest of the task's environment (core/task/task_env).
    if (!opts.requeue.value_or(false)) return;

    std::uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return;
    if (task_env(sp, "SLURM_LOCALID").value_or("") == "0") start_watcher(marker_path(job_id));
    if (opts.launcher.value_or(false)) {
        // torchrun & co. die of SIGUSR1 (its default action) and take their workers with them
        // before they save. An ignored signal stays ignored across exec and fork, so the
        // launcher survives; a worker's own handler (signal.signal) replaces the inherited one.
        (void)signal(SIGUSR1, SIG_IGN);
        (void)signal(SIGUSR2, SIG_IGN);
    }
}

bool is_batch_script(spank_t sp) {
    std::uint32_t step_id = 0;
    return spank_get_item(sp, S_JOB_STEPID, &step_id) == ESPANK_SUCCESS &&
           step_id == SLURM_BATCH_SCRIPT;
}

int on_batch_script_exit(spank_t sp) {
    std::uint32_t job_id = 0;
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS) return 0;
    const std::string path = marker_path(job_id);
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return 0;
    // Anyone can write to /dev/shm: only the job owner's own marker may requeue the job.
    if (!S_ISREG(st.st_mode) || st.st_uid != uid) {
        log_error("requeue: ignoring " + path + ": not a file of the job's user (uid " +
                  std::to_string(uid) + ")");
        return 0;
    }
    (void)unlink(path.c_str());
    const std::string job = "job " + std::to_string(job_id);
    // A script killed by a signal was ended by Slurm: scancel, the time limit, or a requeue
    // already under way (Lightning's own handler runs `scontrol requeue`). Requeueing then would
    // bring back a job the user cancelled, or requeue it twice.
    int status = 0;
    if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS && WIFSIGNALED(status)) {
        log_info("requeue: " + job + " was signalled early, but its script was ended by signal " +
                 std::to_string(WTERMSIG(status)) +
                 " (scancel, time limit or a requeue already under way): not requeued");
        return 0;
    }
    auto* requeue = SDDP_SLURM_API(slurm_requeue);
    if (requeue == nullptr) {
        log_error("requeue: " + job + " was signalled early but cannot be requeued: no " +
                  "slurm_requeue in slurmstepd");
        return 0;
    }
    if (requeue_job(requeue, job_id) == 0) {
        log_info("requeue: " + job + " was signalled early (--ddp=requeue); requeued");
        return 0;
    }
    const int err = errno;
    if (err == ESLURM_JOB_PENDING) {
        log_info("requeue: " + job + " is pending already (requeued by someone else)");
    } else {
        log_error("requeue: " + job +
                  " was signalled early but cannot be requeued: " + slurm_error_text(err) +
                  " (submit with sbatch --requeue, or ask the site for JobRequeue=1)");
    }
    return 0;
}

}  // namespace sddp::plugin
