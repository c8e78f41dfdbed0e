// SPDX-License-Identifier: Apache-2.0
#include "check/check_nccl_plan.hpp"

namespace sddp::check {
namespace {

// "NCCL 2.28.9 from /path/libnccl.so.2 and the CUDA runtime /path/libcudart.so.13"
std::string libraries_text(const nccl::LoadedLibraries& l) {
    return "NCCL " + l.nccl_version + " from " + l.nccl_path + " and the CUDA runtime " +
           l.cuda_runtime_path;
}

}  // namespace

NcclPlan plan_nccl(bool asked, const EnvLookup& env, const Result<nccl::LoadedLibraries>& libs) {
    NcclPlan plan;
    if (!asked) return plan;
    if (!libs) {
        plan.note = "nccl: skipped: " + libs.error().message;
        return plan;
    }
    const auto visible = env("CUDA_VISIBLE_DEVICES");
    if (!visible || visible->empty() || *visible == "NoDevFiles") {
        plan.note = "nccl: skipped: no GPU visible to this task (CUDA_VISIBLE_DEVICES is " +
                    (visible ? "'" + *visible + "'" : std::string("unset")) +
                    "; ask Slurm for GPUs with --gres=gpu:N or --gpus-per-task=N); it would use " +
                    libraries_text(*libs);
        return plan;
    }
    plan.run = true;
    plan.note = "nccl: using " + libraries_text(*libs);
    return plan;
}

}  // namespace sddp::check
