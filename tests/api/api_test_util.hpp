// Helpers of the API-level ReduceMax tests: build a one-op graph through the
// public API, run it, and compare with the naive loop of tests/ref.
#pragma once

#include <fenv.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "crest/crest.hpp"
#include "tests/ref/ref_test_util.hpp"

namespace crest::api_test {

using dt = logical_tensor::data_type;
using lt = logical_tensor;
using ltype = logical_tensor::layout_type;
using dims = logical_tensor::dims;
using namespace ref_test;

constexpr size_t src_id = 0, dst_id = 1, axes_id = 2, op_id = 3;
const char *const op_name = "pool_max";

inline const dt all_dts[] = {dt::f32, dt::bf16, dt::f16};

// Runs f and checks it throws crest::error with status st and a message
// holding every one of parts. Prints the message either way.
inline void expect_error(const std::function<void()> &f, status st,
        const std::vector<std::string> &parts) {
    try {
        f();
        ADD_FAILURE() << "no error; expected status " << to_string(st);
    } catch (const crest::error &e) {
        const std::string msg = e.what();
        EXPECT_EQ(e.get_status(), st)
                << "status " << to_string(e.get_status()) << ": " << msg;
        for (const auto &p : parts)
            EXPECT_NE(msg.find(p), std::string::npos)
                    << "message lacks \"" << p << "\": " << msg;
    }
}

// One ReduceMax op: src (id 0), optional axes input (id 2), dst (id 1).
struct reduce_graph {
    lt src, dst;
    std::optional<lt> axes_in;
    std::optional<std::vector<int64_t>> axes_attr;
    std::optional<bool> keep_dims;

    op make_op() const {
        op r(op_id, op::kind::ReduceMax, op_name);
        r.add_input(src);
        if (axes_in) r.add_input(*axes_in);
        r.add_output(dst);
        if (axes_attr) r.set_attr(op::attr::axes, *axes_attr);
        if (keep_dims) r.set_attr(op::attr::keep_dims, *keep_dims);
        return r;
    }

    // add_op, finalize, get_partitions: the one partition.
    partition build(graph &g) const {
        g.add_op(make_op());
        g.finalize();
        auto parts = g.get_partitions();
        EXPECT_EQ(parts.size(), 1u);
        EXPECT_TRUE(parts.at(0).is_supported())
                << parts.at(0).get_unsupported_reason();
        return parts.at(0);
    }

    compiled_partition compile(const engine &eng,
            fpmath_mode mode = fpmath_mode::strict) const {
        graph g(engine::kind::cpu, mode);
        partition p = build(g);
        std::vector<lt> ins {src};
        if (axes_in) ins.push_back(*axes_in);
        return p.compile(ins, {dst}, eng);
    }
};

inline reduce_graph attr_graph(dt t, const dims &src_dims,
        const std::vector<int64_t> &axes, std::optional<bool> keep) {
    reduce_graph g;
    g.src = lt(src_id, t, src_dims, ltype::strided);
    g.dst = lt(dst_id, t, lt::unknown_ndims, ltype::any);
    g.axes_attr = axes;
    g.keep_dims = keep;
    return g;
}

// Random bits with ties, ±0, ±inf, some NaN, in dtype t.
inline std::vector<uint8_t> random_bits(dt t, int64_t n, uint64_t seed,
        bool with_nan) {
    std::vector<uint8_t> b(std::max<int64_t>(n, 1) * elem_size(t));
    uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (int64_t i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t r = uint32_t(s >> 33);
        uint32_t v;
        const uint32_t kind = r % 16;
        if (t == dt::f32) {
            v = kind < 6 ? 0x3F800000u + ((r >> 8) % 4) * 0x00800000u
                         : 0x40000000u ^ ((r >> 4) & 0x807FFFF0u);
            if (kind == 6) v = (r & 256) ? 0x7F800000u : 0xFF800000u;
            if (kind == 7) v = (r & 256) ? 0x80000000u : 0u;
            if (kind == 8 && with_nan) v = 0x7FC00000u | ((r >> 9) & 0xFF);
        } else {
            const bool h = t == dt::f16;
            v = kind < 6 ? (h ? 0x3C00u : 0x3F80u) + ((r >> 8) % 4)
                         : (h ? 0x4000u : 0x4000u) ^ ((r >> 4) & (h ? 0x83FFu
                                                                  : 0x807Fu));
            if (kind == 6) v = (r & 256) ? (h ? 0x7C00u : 0x7F80u)
                                         : (h ? 0xFC00u : 0xFF80u);
            if (kind == 7) v = (r & 256) ? 0x8000u : 0u;
            if (kind == 8 && with_nan)
                v = (h ? 0x7E00u : 0x7FC0u) | ((r >> 9) & 0xF);
        }
        write_bits(t, b, i, v);
    }
    return b;
}

// The naive result, laid out at the compiled dst's strides: reduced dims
// are found from src rank, axes and keep_dims.
inline impl::reduce_problem problem_of(const lt &src, const lt &dst,
        const std::vector<int64_t> &axes_norm, bool keep) {
    impl::reduce_problem p;
    p.dt = src.get_data_type();
    p.dims = src.get_dims();
    p.src_strides = src.get_strides();
    for (auto a : axes_norm) p.reduce_mask |= 1u << a;
    const bool keep_all = keep || axes_norm.empty();
    size_t j = 0;
    for (int d = 0; d < p.ndims(); ++d) {
        const bool red = p.is_reduced(d);
        if (red && !keep_all) {
            p.dst_strides.push_back(0);
            continue;
        }
        p.dst_strides.push_back(red ? 0 : dst.get_strides().at(j));
        ++j;
    }
    return p;
}

// Runs f with FE_INVALID unmasked (a NaN met by a floating-point max kills
// the process with SIGFPE) and the flags clear; returns whether f left
// the invalid flag raised.
inline bool leaves_invalid_flag_when_trapping(const std::function<void()> &f) {
    feclearexcept(FE_ALL_EXCEPT);
    feenableexcept(FE_INVALID);
    f();
    const bool raised = fetestexcept(FE_INVALID) != 0;
    fedisableexcept(FE_INVALID);
    return raised;
}

// Executes cp on src bits; returns the guarded dst after checking every
// element against the naive loop and every other element untouched.
// trap_invalid: the execution runs with FE_INVALID unmasked (a NaN met by
// a floating-point max kills the process with SIGFPE) and must leave the
// invalid flag clear.
inline void run_and_check(const compiled_partition &cp, const engine &eng,
        const std::vector<uint8_t> &src_bits,
        const std::vector<int64_t> &axes_norm, bool keep,
        const void *axes_data = nullptr, bool trap_invalid = false) {
    const lt src = cp.query_logical_tensor(src_id);
    const lt dst = cp.query_logical_tensor(dst_id);
    ASSERT_EQ(dst.get_layout_type(), ltype::strided);
    const impl::reduce_problem p = problem_of(src, dst, axes_norm, keep);
    guarded out(src.get_data_type(), span(dst.get_dims(), dst.get_strides()));
    stream strm(eng);
    std::vector<tensor> ins {tensor(src, eng, const_cast<uint8_t *>(
                                                     src_bits.data()))};
    if (axes_data)
        ins.emplace_back(cp.query_logical_tensor(axes_id), eng,
                const_cast<void *>(axes_data));
    const auto execute = [&] { cp.execute(strm, ins, {tensor(dst, eng, out.data())}); };
    if (trap_invalid)
        EXPECT_FALSE(leaves_invalid_flag_when_trapping(execute))
                << cp.get_kernel_name() << " left the invalid flag raised";
    else
        execute();
    const auto expect = naive_reduce_max(p, src_bits);
    for (int64_t i = -guard_elems; i < out.capacity() + guard_elems; ++i) {
        auto it = expect.find(i);
        if (it == expect.end()) {
            EXPECT_TRUE(out.untouched(i)) << "wrote dst offset " << i;
            continue;
        }
        // ops.md asks for a NaN and for ±0 either zero; the ref writes the
        // first NaN, a fast kernel may write another of the inputs' NaNs.
        const uint32_t got = out.at(i);
        const bool nan_ok = std::isnan(decode(p.dt, it->second))
                && std::isnan(decode(p.dt, got));
        EXPECT_TRUE(got == it->second || nan_ok
                || (is_zero(p.dt, got) && is_zero(p.dt, it->second)))
                << "dst offset " << i << ": got 0x" << std::hex << got
                << " expected 0x" << it->second;
    }
}

} // namespace crest::api_test
