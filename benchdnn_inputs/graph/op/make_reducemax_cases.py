#!/usr/bin/env python3
"""Writes the ReduceMax op cases of this folder (oneDNN Graph JSON 3.0.0).

Run from anywhere: python3 make_reducemax_cases.py. The files are committed;
rerun only to change them.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def dense(shape, order=None):
    order = order or list(range(len(shape)))
    st = [0] * len(shape)
    acc = 1
    for d in reversed(order):
        st[d] = acc
        acc *= max(shape[d], 1)
    return st


def lt(tid, dt, shape, stride=None, layout="strided"):
    return {"id": tid, "dtype": dt, "shape": shape,
            "stride": stride if stride is not None else dense(shape),
            "layout_type": layout, "property_type": "undef"}


def out_shape(shape, axes, keep):
    r = len(shape)
    ax = {a % r for a in axes} if r else set()
    if keep or not axes:
        return [1 if i in ax else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in ax]


def reducemax(src, dst, axes=None, keep=None, extra_inputs=(), name="REDUCTION_0"):
    attrs = {}
    if axes is not None:
        attrs["axes"] = {"type": "s64[]", "value": axes}
    if keep is not None:
        attrs["keep_dims"] = {"type": "bool", "value": 1 if keep else 0}
    return {"id": 0, "name": name, "kind": "ReduceMax", "attrs": attrs,
            "inputs": [src] + list(extra_inputs), "outputs": [dst]}


def graph(ops, fpmath="strict"):
    return {"version": "3.0.0", "engine_kind": "cpu", "fpmath_mode": fpmath,
            "graph": ops}


def write(name, g, raw=None):
    path = os.path.join(HERE, name)
    with open(path, "w") as f:
        if raw is not None:
            f.write(raw)
        else:
            json.dump(g, f, indent=2)
            f.write("\n")


def simple(name, shape, axes, keep, dt="f32", stride=None, out_stride=None):
    oshape = out_shape(shape, axes, keep)
    src = lt(0, dt, shape, stride)
    dst = lt(1, dt, oshape, out_stride)
    write(name, graph([reducemax(src, dst, axes, keep)]))


# Valid cases ---------------------------------------------------------------
simple("reducemax_4d_nchw.json", [2, 3, 4, 5], [1], True)
simple("reducemax_4d_nhwc.json", [2, 8, 5, 3], [2, 3], False,
       stride=dense([2, 8, 5, 3], [0, 2, 3, 1]))
simple("reducemax_4d_negative_axes.json", [2, 3, 4, 5], [-1, -3], True)
simple("reducemax_4d_keep_dims_default.json", [3, 4, 5, 6], [2], None)
simple("reducemax_rank0.json", [], [], False)
simple("reducemax_rank1.json", [37], [0], False)
simple("reducemax_rank1_keep.json", [37], [-1], True)
simple("reducemax_rank5.json", [2, 3, 4, 5, 6], [1, 3], True)
simple("reducemax_rank6.json", [2, 1, 3, 2, 4, 3], [0, 2, 5], False)
simple("reducemax_size1_dims.json", [1, 5, 1, 7], [0, 2], False)
simple("reducemax_zero_dim_reduced.json", [3, 0, 4], [1], True)
simple("reducemax_zero_dim_kept.json", [0, 5, 4], [1], False)
simple("reducemax_empty_axes.json", [2, 3, 4], [], True)
simple("reducemax_empty_axes_nokeep.json", [2, 3, 4], [], False)
simple("reducemax_padded_strides.json", [4, 5, 6], [2], True,
       stride=[48, 8, 1])
simple("reducemax_long_row.json", [4, 3000], [1], True)
simple("reducemax_long_column.json", [3000, 4], [0], True)
simple("reducemax_bf16.json", [2, 16, 9, 9], [1], True, dt="bf16")
simple("reducemax_f16.json", [2, 16, 9, 9], [2, 3], False, dt="f16")

# Axes as an s32 input tensor (read at execution).
for name, shape, naxes, keep in [
        ("reducemax_axes_input_s32.json", [4, 6, 5], 2, True),
        ("reducemax_axes_input_s32_nokeep.json", [3, 4, 5, 2], 1, False)]:
    axes = [1, 2][:naxes] if keep else [1]
    src = lt(0, "f32", shape)
    ax = lt(2, "s32", [naxes])
    dst = lt(1, "f32", out_shape(shape, axes, keep))
    write(name, graph([reducemax(src, dst, None, keep, extra_inputs=[ax])]))

# Negative cases: each must end INVALID_ARGUMENTS ---------------------------
s = [2, 3, 4, 5]
write("bad_reducemax_both_axes.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "f32", [2, 1, 4, 5]), [1], True,
    extra_inputs=[lt(2, "s32", [1])])]))
write("bad_reducemax_no_axes.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "f32", [2, 1, 4, 5]), None, True)]))
write("bad_reducemax_axis_out_of_range.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "f32", [2, 3, 4, 1]), [4], True)]))
write("bad_reducemax_duplicate_axes.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "f32", [2, 1, 4, 5]), [1, -3], True)]))
write("bad_reducemax_wrong_out_shape.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "f32", [2, 3, 4, 5]), [1], True)]))
write("bad_reducemax_s32_src.json", graph([reducemax(
    lt(0, "s32", s), lt(1, "s32", [2, 1, 4, 5]), [1], True)]))
write("bad_reducemax_dtype_mismatch.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "bf16", [2, 1, 4, 5]), [1], True)]))
write("bad_reducemax_axes_input_f32.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "f32", [2, 1, 4, 5]), None, True,
    extra_inputs=[lt(2, "f32", [1])])]))
write("bad_reducemax_axes_input_2d.json", graph([reducemax(
    lt(0, "f32", s), lt(1, "f32", [2, 1, 4, 5]), None, True,
    extra_inputs=[lt(2, "s32", [1, 1])])]))
write("bad_malformed_truncated.json", None,
      raw='{"version": "3.0.0", "engine_kind": "cpu", "graph": [ {"id": 0,\n')
bad = graph([reducemax(lt(0, "f32", s), lt(1, "f32", [2, 1, 4, 5]), [1], True)])
bad["graph"][0]["inputs"][0]["shape"][2] = "x"
write("bad_malformed_shape_string.json", bad)
