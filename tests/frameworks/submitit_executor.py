# SPDX-License-Identifier: Apache-2.0
"""submitit's own Slurm path with --ddp: a SlurmExecutor job of 2 nodes x 2 tasks whose srun gets
`--ddp` through `srun_args`, running submitit_env.submitit_task on every task.

    python submitit_executor.py FOLDER

Prints the tasks' STACK lines (their results) for stack_lib.sh's check_stack.
"""
import sys

import submitit

import submitit_env


def main():
    executor = submitit.SlurmExecutor(folder=sys.argv[1], max_num_timeout=0)
    executor.update_parameters(nodes=2, ntasks_per_node=2, cpus_per_task=1, time=5, srun_args=["--ddp"])
    job = executor.submit(submitit_env.submitit_task)
    for line in job.results():
        print(line, flush=True)


if __name__ == "__main__":
    main()
