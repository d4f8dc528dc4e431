// ReduceMax lowered to dnnl::reduction (algorithm reduction_max).
//
// Threading: Debian's libdnnl2 (2.6.3) is built with the OpenMP CPU runtime
// (dnnl_version()->cpu_runtime == OMP), so oneDNN parallelises inside its own
// OpenMP team and cannot run inside crest's oneTBB arena. The thread_pool is
// accepted for a future TBB/threadpool build and is unused today.
//
// Concurrency: the memory objects, the stream and the user scratchpad are
// created once at make time; execute() only swaps data handles and runs, all
// under a mutex. Per-call memory/stream objects would allocate on every call,
// and the scratchpad buffer is shared anyway. Serialising costs little: each
// call already spreads over every core through OpenMP, and two concurrent
// OpenMP teams would oversubscribe the machine.
// oneDNN itself still builds a small argument map per execute (its internal
// exec context); that allocation is inside the library and unavoidable.
#include "backend/dnnl/dnnl_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "backend/dnnl/dnnl_compat.hpp"

namespace crest::impl::dnnl_backend {
namespace {

const char *dt_name(data_type dt) {
    switch (dt) {
        case data_type::f32: return "f32";
        case data_type::bf16: return "bf16";
        case data_type::f16: return "f16";
        default: return "other";
    }
}

bool to_dnnl_dt(data_type dt, dnnl::memory::data_type *out) {
    switch (dt) {
        case data_type::f32: *out = dnnl::memory::data_type::f32; return true;
        case data_type::bf16: *out = dnnl::memory::data_type::bf16; return true;
        case data_type::f16: *out = dnnl::memory::data_type::f16; return true;
        default: return false;
    }
}

bool fail(std::string *why_not, std::string msg) {
    if (why_not) *why_not = "dnnl: " + std::move(msg);
    return false;
}

kernel_ptr refuse(std::string *why_not, std::string msg) {
    fail(why_not, std::move(msg));
    return nullptr;
}

// Checks everything oneDNN cannot express, before asking it.
bool check_problem(const reduce_problem &p, std::string *why_not) {
    const int nd = p.ndims();
    if (nd == 0)
        return fail(why_not, "rank 0 is not expressible as a oneDNN memory");
    if (nd > compat::max_ndims)
        return fail(why_not,
                "rank " + std::to_string(nd) + " exceeds oneDNN's maximum of "
                        + std::to_string(compat::max_ndims));
    if ((int)p.src_strides.size() != nd || (int)p.dst_strides.size() != nd)
        return fail(why_not, "strides do not match the rank");
    if (nd < 32 && (p.reduce_mask >> nd) != 0)
        return fail(why_not, "reduce_mask names a dim beyond the rank");
    if (p.reduce_mask == 0)
        return fail(why_not,
                "empty reduce_mask (identity) is not a oneDNN reduction");
    for (int d = 0; d < nd; ++d) {
        if (p.dims[d] == 0)
            return fail(why_not,
                    "zero-size dim " + std::to_string(d)
                            + " (oneDNN reduction cannot yield -inf / nothing)");
        if (p.dims[d] < 0 || p.src_strides[d] < 0 || p.dst_strides[d] < 0)
            return fail(why_not, "negative dim or stride");
    }
    // oneDNN refuses a "reduction" whose src and dst dims are equal.
    bool any_real = false;
    for (int d = 0; d < nd; ++d)
        if (p.is_reduced(d) && p.dims[d] > 1) any_real = true;
    if (!any_real)
        return fail(why_not,
                "every reduced dim has size 1 (a copy, not a oneDNN "
                "reduction)");
    return true;
}

// dst strides for oneDNN: dims 1 on reduced dims need a stride that keeps
// dst's dim order the same as src's (oneDNN's jit path compares layouts).
// A reduced dim gets the extent of the kept dst dims that sit inside it in
// src order, so it never looks "inner" to any of them.
dnnl::memory::dims dnnl_dst_strides(const reduce_problem &p) {
    const int nd = p.ndims();
    std::vector<int> order(nd);  // outermost first
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return p.src_strides[a] > p.src_strides[b];
    });
    dnnl::memory::dims s(p.dst_strides.begin(), p.dst_strides.end());
    for (int i = 0; i < nd; ++i) {
        const int d = order[i];
        if (!p.is_reduced(d)) continue;
        int64_t st = 1;
        for (int j = i + 1; j < nd; ++j) {
            const int e = order[j];
            if (!p.is_reduced(e))
                st = std::max<int64_t>(st, p.dst_strides[e] * p.dims[e]);
        }
        s[d] = st;
    }
    return s;
}

struct aligned_free {
    void operator()(void *ptr) const { std::free(ptr); }
};

class dnnl_reduce_kernel final : public kernel {
public:
    dnnl_reduce_kernel(dnnl::engine eng, dnnl::reduction::primitive_desc pd)
        : eng_(std::move(eng))
        , prim_(pd)
        , name_("dnnl:" + compat::impl_info(pd))
        , stream_(compat::make_stream(eng_))
        , src_(pd.src_desc(), eng_, DNNL_MEMORY_NONE)
        , dst_(pd.dst_desc(), eng_, DNNL_MEMORY_NONE) {
        const size_t bytes = compat::scratchpad_bytes(pd);
        if (bytes > 0) {
            // Touched once here so no page is first-touched on the timed path.
            const size_t rounded = (bytes + 63) / 64 * 64;
            scratch_buf_.reset(std::aligned_alloc(64, rounded));
            if (!scratch_buf_) throw std::bad_alloc();
            std::fill_n(static_cast<char *>(scratch_buf_.get()), rounded, 0);
            scratch_ = dnnl::memory(
                    pd.scratchpad_desc(), eng_, scratch_buf_.get());
        }
        args_[0] = {DNNL_ARG_SRC, src_.get()};
        args_[1] = {DNNL_ARG_DST, dst_.get()};
        nargs_ = 2;
        if (scratch_) args_[nargs_++] = {DNNL_ARG_SCRATCHPAD, scratch_.get()};
    }

    void execute(const void *const *inputs,
            void *const *outputs) const override {
        std::lock_guard<std::mutex> lock(mu_);
        try {
            src_.set_data_handle(const_cast<void *>(inputs[0]));
            dst_.set_data_handle(outputs[0]);
        } catch (const dnnl::error &) {
            return;  // cannot happen for CPU memory; never let it escape
        }
        // The C API takes a prebuilt argument array: no std::unordered_map
        // per call on our side (the C++ execute() builds one).
        if (dnnl_primitive_execute(prim_.get(), stream_.get(), nargs_, args_)
                == dnnl_success)
            dnnl_stream_wait(stream_.get());
    }

    std::string name() const override { return name_; }

private:
    dnnl::engine eng_;
    dnnl::reduction prim_;
    std::string name_;
    mutable std::mutex mu_;
    dnnl::stream stream_;
    dnnl::memory src_, dst_, scratch_;
    std::unique_ptr<void, aligned_free> scratch_buf_;
    dnnl_exec_arg_t args_[3] = {};
    int nargs_ = 0;
};

} // namespace

kernel_ptr make_reduce_max(const reduce_problem &p, const thread_pool &pool,
        bool require_jit, std::string *why_not) {
    (void)pool;  // see the threading note at the top
    if (!check_problem(p, why_not)) return nullptr;
    dnnl::memory::data_type ddt;
    if (!to_dnnl_dt(p.dt, &ddt))
        return refuse(why_not, "unsupported data type");

    try {
        dnnl::memory::dims dims(p.dims.begin(), p.dims.end());
        dnnl::memory::dims src_str(p.src_strides.begin(), p.src_strides.end());
        dnnl::memory::dims dst_dims = dims;
        for (int d = 0; d < p.ndims(); ++d)
            if (p.is_reduced(d)) dst_dims[d] = 1;
        dnnl::memory::desc src_md(dims, ddt, src_str);
        dnnl::memory::desc dst_md(dst_dims, ddt, dnnl_dst_strides(p));

        dnnl::engine eng = compat::make_cpu_engine();
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        dnnl::reduction::primitive_desc pd;
        try {
            pd = compat::make_reduction_pd(eng,
                    dnnl::algorithm::reduction_max, src_md, dst_md, 0.f, 0.f,
                    attr);
        } catch (const dnnl::error &e) {
            if (e.status == dnnl_unimplemented)
                return refuse(why_not,
                        std::string("oneDNN ") + compat::version_string()
                                + " has no reduction implementation for "
                                + dt_name(p.dt) + " with these dims/strides");
            return refuse(why_not,
                    std::string("oneDNN rejects the reduction: ") + e.what());
        }
        const std::string impl = compat::impl_info(pd);
        if (require_jit && impl.rfind("ref", 0) == 0)
            return refuse(why_not, "oneDNN picks " + impl + " for this problem");
        return std::make_shared<dnnl_reduce_kernel>(eng, pd);
    } catch (const dnnl::error &e) {
        fail(why_not, std::string("oneDNN error: ") + e.what());
    } catch (const std::exception &e) {
        fail(why_not, std::string("error: ") + e.what());
    }
    return nullptr;
}

} // namespace crest::impl::dnnl_backend
