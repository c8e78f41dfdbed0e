# SPDX-License-Identifier: Apache-2.0
# The real stacks users bring (tests/frameworks/test_*.sh), each run on the local cluster from the
# pinned, cached environments of scripts/framework-env.sh. Included by tests/integration/ after
# sddp_integration_test() is defined; labelled integration (the cluster fixture) and stacks
# (`ctest -L stacks` runs them alone).
function(sddp_stack_test name script)
  sddp_integration_test(${name} "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${script}" ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "integration;stacks")
endfunction()

# PyTorch family (torch 2.15: env://, torchrun, mp.spawn, ft_launcher; Lightning; Accelerate)
sddp_stack_test(stack_torch test_torch.sh TIMEOUT 600)
sddp_stack_test(stack_torch_spawn test_torch_spawn.sh TIMEOUT 400)
sddp_stack_test(stack_torch_init_methods test_torch_init_methods.sh TIMEOUT 400)
sddp_stack_test(stack_ft_launcher test_ft_launcher.sh TIMEOUT 600)
sddp_stack_test(stack_lightning test_lightning.sh TIMEOUT 600)
sddp_stack_test(stack_lightning_torchelastic test_lightning_torchelastic.sh TIMEOUT 400)
sddp_stack_test(stack_lightning_steps test_lightning_steps.sh TIMEOUT 500)
sddp_stack_test(stack_accelerate test_accelerate.sh TIMEOUT 600)
# --ddp=requeue with Lightning (Slurm mode) and torchrun: ~4 min, most of it Slurm's requeue delay.
sddp_stack_test(stack_requeue test_requeue_stacks.sh TIMEOUT 720)

# Hugging Face Transformers, DeepSpeed, MPI, submitit, Horovod
sddp_stack_test(stack_transformers test_transformers.sh TIMEOUT 400)
# The first run on a machine compiles DeepSpeed's CPU shm comm op (~4 min on 2 loaded cores).
sddp_stack_test(stack_deepspeed test_deepspeed.sh TIMEOUT 1200)
sddp_stack_test(stack_mpi4py test_mpi4py.sh TIMEOUT 400)
sddp_stack_test(stack_submitit test_submitit.sh TIMEOUT 300)
# Horovod 0.28.1 over MPI, compiled against Debian's torch 1.13 (~4 min on 2 cores, cached).
sddp_stack_test(stack_horovod test_horovod.sh TIMEOUT 400)

# JAX, TensorFlow, host files
sddp_stack_test(stack_jax test_jax.sh TIMEOUT 300)
sddp_stack_test(stack_tensorflow test_tensorflow.sh TIMEOUT 420)
sddp_stack_test(stack_hostfile test_hostfile.sh TIMEOUT 180)
