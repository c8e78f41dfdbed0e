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

# Hugging Face Transformers, DeepSpeed, MPI, submitit, Horovod

# JAX, TensorFlow, host files
