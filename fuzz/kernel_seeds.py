#!/usr/bin/env python3
"""fuzz/kernel_seeds.py: write the hand-made seeds of fuzz_kernel's second
encoding into fuzz/corpus/kernel/ as v2-NAME.bin, one or more per feature
(placements, several PEs, multicast, send/recv, block floats, composites
with epilogues, softmax_merge, 0-D tensors). The encoding is
fuzz/fuzz_kernel.c's: a header (running PEs, machine, setup actions), then
ops, each a byte (its case in run_one) and its arguments' bytes.

    python3 fuzz/kernel_seeds.py        # then replay: ctest -R fuzz_replay
"""
import os
import sys

# run_one's cases
ALLOC, FILL, LOAD, STORE, COPY, VIEW, RESHAPE, MATH1, MATH2, SCALE, DOT, CAST = range(12)
MASK, BEGIN, END, SEND, RECV, WAIT_T, COMPOSITE, MERGE, PIN, META, WAIT, PID = range(12, 24)
REDUCE, SCALAR, WHERE, MCAST, ONLY, MERGE_R, GEMM_R, BFP_R, ZERO_R, MACHINE = range(24, 34)
GIVE, RECV_ADD = 34, 35
# setup actions
NEW, NEW_SHARDED, REPLICATE, SHARD, INTERLEAVE, FIDELITY = range(6)
# the running PEs (read_header's sets) and machines
PE0, CUBE_PAIR, TWO_CUBES, ALL = 0, 1, 2, 3
SMALL, QUAD = 0, 1
# the launch's tensors, the first slots
X, W, Y, V, Z, Q8, Q4, TMP, L1 = range(9)
FP32, BF16, FP16, BFP8, BFP4 = range(5)


def header(pes, machine, *actions):
    out = [pes, machine, len(actions)]
    for a in actions:
        out += a
    return out


def fill(dtype, shape, value=1):
    """tl_fill: dtype, ndim, four extents, the value."""
    dims = list(shape) + [0] * (4 - len(shape))
    return [FILL, dtype, len(shape)] + dims + [value]


def view(slot, start, shape):
    return [VIEW, slot] + list(start) + [0] * (4 - len(start)) + list(shape) + [0] * (4 - len(shape))


N = 9   # slots after the launch's tensors (no setup tensors)

SEEDS = {
    # PE 0 multicasts a tile to PE 1 of its cube, which adds it to its own
    "mcast": header(CUBE_PAIR, SMALL)
    + fill(FP32, [4, 4]) + [ONLY, 0, MCAST, 0, 0, 1, 2, N, 1]
    + [ONLY, 1, RECV, 1, 1, ONLY, 1, MATH2, 5, N + 1, N],
    # all eight PEs: each multicasts to its cube's whole 2x2 mesh, then
    # receives from its ring neighbour (some deadlock: a fine outcome)
    "mcast_all": header(ALL, SMALL)
    + fill(BF16, [2, 3]) + [MCAST, 0, 0, 2, 2, N, 0, LOAD, X],
    # two PEs of two cubes swap tiles (send to the next, receive from the
    # previous) and add what arrives
    "exchange": header(TWO_CUBES, SMALL)
    + fill(FP32, [4, 4]) + [SEND, 1, N, 2, RECV, 1, 2, MATH2, 5, N + 1, N],
    # a tag the receiver does not wait for: deadlock
    "tag_mismatch": header(TWO_CUBES, SMALL)
    + fill(FP32, [4, 4]) + [SEND, 1, N, 1, RECV, 1, 2],
    # a shape the receiver does not expect: its add fails
    "shape_mismatch": header(TWO_CUBES, SMALL)
    + fill(FP32, [4, 4]) + fill(FP32, [3, 4]) + [SEND, 1, N, 0, RECV_ADD, 1, 0, N + 1],
    # x sharded by rows, w interleaved, v replicated; a new bfp8 tensor
    # sharded block-cyclically; every PE of the 4-cube machine loads views
    "placements": header(ALL, QUAD,
                         [SHARD, X, 0, 0], [INTERLEAVE, W], [REPLICATE, V],
                         [NEW, 0, 0, 0, BFP8, 2, 6, 32, 0, 0, 0],
                         [SHARD, N, 1, 2], [FIDELITY, 0, 2])
    + [LOAD, X] + view(X, [3, 0], [5, 16]) + [LOAD, N + 2, STORE, Y, N + 1]
    + [LOAD, N] + view(N, [1, 3], [2, 8]) + [LOAD, N + 5],
    # a TCM-sharded launch tensor read in place by the PEs of two cubes
    "sharded_tcm": header(TWO_CUBES, SMALL,
                          [NEW_SHARDED, 0, 0, 0, FP32, 2, 4, 4, 0, 0, 0])
    + [MATH1, 1, N, SEND, 1, N, 0, RECV, 1, 0, DOT, N, N + 2, 1],
    # a shard on an axis the tensor has not: a setup error
    "shard_bad_axis": header(PE0, SMALL, [SHARD, Z, 0, 0]),
    # block floats through views at unaligned columns: store, copy, load,
    # cast, send, dot, add, in TCM, scratch and the launch's tensors
    "bfp_store": [PE0, SMALL, 0] + [BFP_R, 0, 0, 0, 3, 2, 1, 5, 2, 9, 8, 0],
    "bfp_copy": [PE0, SMALL, 0] + [BFP_R, 0, 1, 1, 2, 5, 0, 17, 1, 7, 12, 0],
    "bfp_load": [PE0, SMALL, 0] + [BFP_R, 3, 2, 0, 3, 6, 1, 3, 1, 20, 5, 0]
    + [BFP_R, 7, 2, 1, 1, 7, 0, 13, 0, 30, 5, 0],
    "bfp_cast": [PE0, SMALL, 0] + [BFP_R, 2, 11, 0, 4, 4, 2, 9, 1, 20, 44, 0],
    "bfp_send": [CUBE_PAIR, SMALL, 0] + [BFP_R, 0, 4, 1, 2, 6, 0, 1, 1, 30, 4, 1]
    + [RECV, 1, 0],
    "bfp_dot": [PE0, SMALL, 0] + [BFP_R, 1, 5, 0, 3, 4, 0, 15, 2, 16, 6, 0],
    "bfp_cast_store": [PE0, SMALL, 0] + [BFP_R, 0, 6, 1, 5, 7, 3, 3, 2, 33, 252, 0],
    "bfp_add": [PE0, SMALL, 0] + [BFP_R, 1, 7, 0, 1, 3, 0, 16, 0, 16, 8, 0],
    # GEMM composites: RMSNORM with a [N] weight, BIAS [1, N], SCALE;
    # a wrong-rank RMSNORM weight; a MATH-only composite on a view
    "gemm_rmsnorm": [PE0, SMALL, 0]
    + [GEMM_R, 0, 0, 3, 3, 7, 15, 0, FP32, FP32, FP32, 255]
    + [0, 1, 255, 4, 2, 1, 2, 255, 0, 0, 3, 0, 255, 2, 0, 5, 3, 255, 8, 1, 0, 0, 0, 1],
    "gemm_rmsnorm_rank": [PE0, SMALL, 0]
    + [GEMM_R, 0, 0, 1, 3, 7, 15, 1, BF16, BFP8, FP32, 255]
    + [0, 8, 255, 4, 2] + [0, 0, 255, 0, 0] * 3 + [0, 0, 0, 1],
    "gemm_rmsnorm_column": [PE0, SMALL, 0]
    + [GEMM_R, 0, 0, 1, 3, 7, 15, 0, FP32, FP32, FP32, 255]
    + [0, 5, 255, 4, 2] + [0, 0, 255, 0, 0] * 3 + [0, 0, 0, 1],
    "gemm_view_out": [PE0, SMALL, 0]
    + [GEMM_R, 0, 5, 2, 5, 19, 70, 1, FP32, FP16, BFP4, 255]
    + [2, 7, 255, 4, 1, 1, 3, 255, 6, 0] + [0, 0, 255, 0, 0] * 2 + [4, 8, 0, 1],
    "math_composite": [PE0, SMALL, 0]
    + [GEMM_R, 200, 1, 2, 3, 7, 15, 0, FP32, FP32, FP32, 255]
    + [6, 0, 255, 0, 0, 3, 0, 255, 9, 2] + [0, 0, 255, 0, 0] * 2 + [0, 0, 0, 1],
    "gemm_0d_out": [PE0, SMALL, 0]
    + [GEMM_R, 0, 2, 1, 3, 7, 15, 0, FP32, FP32, FP32, 255]
    + [5, 0, 255, 4, 0] + [0, 0, 255, 0, 0] * 3 + [0, 0, 0, 1],
    # softmax_merge: well-formed, then s aliasing o, v aliasing o, a 0-D
    # in m's place, scores in TCM and in HBM
    "merge": [PE0, SMALL, 0] + [MERGE_R, 3, 7, 3, 0, 0, 0, FP32, 1]
    + [MERGE_R, 3, 7, 3, 0, 0, 1, BF16, 1],
    "merge_s_is_o": [PE0, SMALL, 0] + [MERGE_R, 3, 3, 3, 4, 0, 0, FP32, 1],
    "merge_v_is_o": [PE0, SMALL, 0] + [MERGE_R, 3, 3, 3, 8, 0, 0, FP32, 1],
    "merge_0d_m": [PE0, SMALL, 0] + [MERGE_R, 3, 7, 3, 32, 2, 0, FP32, 1],
    "merge_hbm_s": [TWO_CUBES, SMALL, 0] + [MERGE_R, 3, 7, 3, 0, 0, 2, FP32, 1],
    # a merge whose state is a stale tensor of another PE
    "merge_foreign": [CUBE_PAIR, SMALL, 0] + [MERGE_R, 1, 1, 1, 0, 0, 0, FP32, 0]
    + [GIVE, N + 1, 0, MERGE, N, N, 254, N + 1, N + 1],
}

# one seed per op of zero_d_recipe, on each kind of 0-D tensor
# (other: a [1] tensor; axis 0; to the next PE, from the previous), and
# each kind of 0-D tensor once
for act in range(20):
    SEEDS["zero_d_%02d" % act] = [CUBE_PAIR, SMALL, 0] + fill(FP32, [1]) + [
        ZERO_R, 0, act, N, 0, 1, 1, FP32]
for where in range(1, 4):
    SEEDS["zero_d_kind%d" % where] = [PE0, SMALL, 0] + fill(FP32, [1]) + [
        ZERO_R, where, 5, N, 0, 0, 0, BFP8]


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(root, "corpus", "kernel")
    for name, prog in SEEDS.items():
        if prog[0] == 0xff:
            sys.exit(name + ": starts with the first encoding's marker")
        with open(os.path.join(out, "v2-%s.bin" % name), "wb") as f:
            f.write(bytes(b & 0xff for b in prog))
    print("wrote %d seeds to %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()
