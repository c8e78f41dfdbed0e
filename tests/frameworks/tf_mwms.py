# SPDX-License-Identifier: Apache-2.0
"""TensorFlow MultiWorkerMirroredStrategy on CPU as a user writes it under `srun --ddp=tf`: the
strategy reads TF_CONFIG, then a cross-worker all-reduce and two synchronous training steps of a
tiny linear model (gradients all-reduced across workers, so every worker ends with the same weights).

The STACK line reports the cluster as the strategy's own resolver parsed it (worker 0's host:port,
this worker's own host:port, the worker list), so the shell can compare it with the ranks' hosts.
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from stack_report import digest_arrays, report  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()
resolver = strategy.cluster_resolver
task_type, task_id = resolver.task_type, resolver.task_id or 0
# Without TF_CONFIG the strategy quietly trains each worker alone: report that, do not crash.
workers = resolver.cluster_spec().as_dict().get("worker", [])
nworkers = strategy.num_replicas_in_sync

# Every worker contributes task_id+1: the sum proves the all-reduce crossed every worker.
contrib = strategy.run(lambda: tf.constant(float(task_id + 1)))
reduced = float(strategy.reduce(tf.distribute.ReduceOp.SUM, contrib, axis=None))
expected = nworkers * (nworkers + 1) // 2

with strategy.scope():
    w = tf.Variable(tf.zeros([4, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")


@tf.function
def train_step(x, y):
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        grads = tape.gradient(loss, [w, b])
        ctx = tf.distribute.get_replica_context()
        grads = ctx.all_reduce(tf.distribute.ReduceOp.MEAN, grads)
        w.assign_sub(0.1 * grads[0])
        b.assign_sub(0.1 * grads[1])
        return loss

    return strategy.run(step, args=(x, y))


# Each worker trains on its own data: identical final weights need the gradient all-reduce.
rng = np.random.default_rng(task_id)
for _ in range(2):
    x = tf.constant(rng.standard_normal((8, 4)), dtype=tf.float32)
    y = tf.constant(rng.standard_normal((8, 1)), dtype=tf.float32)
    train_step(x, y)

chief_host, chief_port = workers[0].rsplit(":", 1) if workers else ("-", "-")
own = resolver.cluster_spec().task_address(task_type, task_id) if workers else "-"


def hostfile_first():
    """First host of SLURM_DDP_HOSTFILE (--ddp=hostfile), '-' without one, 'unreadable' if set but
    not readable by this worker."""
    path = os.environ.get("SLURM_DDP_HOSTFILE")
    if not path:
        return "-"
    try:
        with open(path) as f:
            return f.readline().split()[0]
    except (OSError, IndexError):
        return "unreadable"


tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
report("tf", task_id, nworkers, chief_host, chief_port, digest_arrays([w.numpy(), b.numpy()]),
       reduced=int(reduced), expected=expected, collective_ok="yes" if reduced == expected else "no",
       task_type=task_type, own=own, workers=",".join(workers),
       cfg_index=tf_config.get("task", {}).get("index", "-"),
       hostfile_first=hostfile_first(),
       slurm_procid=os.environ.get("SLURM_PROCID", "-"), step=os.environ.get("SLURM_STEP_ID", "-"))
