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
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/dnnl/dnnl_compat.hpp"
#include "backend/fp_env.hpp"

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

// The problem as oneDNN will see it. Max over a set of elements does not
// care how dims are labelled, so dims are relabelled in src memory order
// (outermost first), size-1 dims dropped and neighbours merged where both
// tensors allow it. oneDNN 2.6's jit reduction wants plain layouts with the
// reduced dims innermost: channels-last with C reduced, or a reduction over
// several contiguous dims, only reach it after this step.
struct dnnl_view {
    dnnl::memory::dims dims, src_strides, dst_dims, dst_strides;
};

dnnl_view canonicalise(const reduce_problem &p) {
    struct dim {
        int64_t n, ss, ds;
        bool red;
    };
    std::vector<dim> v;
    for (int d = 0; d < p.ndims(); ++d)
        if (p.dims[d] != 1)
            v.push_back({p.dims[d], p.src_strides[d],
                    p.is_reduced(d) ? 0 : p.dst_strides[d], p.is_reduced(d)});
    std::stable_sort(v.begin(), v.end(),
            [](const dim &a, const dim &b) { return a.ss > b.ss; });
    std::vector<dim> m;
    for (const dim &x : v) {
        if (!m.empty()) {
            dim &o = m.back();  // o is outer, x inner
            if (o.red == x.red && o.ss == x.ss * x.n
                    && (o.red || o.ds == x.ds * x.n)) {
                o.n *= x.n;
                o.ss = x.ss;
                o.ds = x.ds;
                continue;
            }
        }
        m.push_back(x);
    }
    // A reduced dim becomes 1 in dst; its stride is the extent of the kept
    // dst dims inside it, so dst keeps src's dim order (a plain layout when
    // dst is dense).
    dnnl_view out;
    for (size_t i = 0; i < m.size(); ++i) {
        int64_t ds = m[i].ds;
        if (m[i].red) {
            ds = 1;
            for (size_t j = i + 1; j < m.size(); ++j)
                if (!m[j].red) ds = std::max(ds, m[j].ds * m[j].n);
        }
        out.dims.push_back(m[i].n);
        out.src_strides.push_back(m[i].ss);
        out.dst_dims.push_back(m[i].red ? 1 : m[i].n);
        out.dst_strides.push_back(ds);
    }
    return out;
}

struct aligned_free {
    void operator()(void *ptr) const { std::free(ptr); }
};

// oneDNN 2.6's max starts from the lowest finite value of its f32
// accumulator, not from -inf: an output whose inputs are all -inf comes
// out as -FLT_MAX in f32 (bf16 rounds it to -inf). ops.md's max of
// -infs is -inf, so the outputs that read the lowest finite value are
// looked at again: their inputs are all -inf (then -inf), or one of them
// is that value. A pass over dst per call; src only for those outputs,
// which data rarely has (a fully masked row of scores).
class lowest_fixup {
public:
    explicit lowest_fixup(const reduce_problem &p) : p_(p) {
        lowest_ = p.dt == data_type::f32 ? 0xff7fffffu : 0xff7fu;
        neg_inf_ = p.dt == data_type::f32 ? 0xff800000u : 0xff80u;
        esz_ = p.dt == data_type::f32 ? 4 : 2;
        for (int d = 0; d < p.ndims(); ++d) (p.is_reduced(d) ? red_ : kept_).push_back(d);
    }

    void apply(const void *src, void *dst) const {
        const auto *s = static_cast<const uint8_t *>(src);
        auto *o = static_cast<uint8_t *>(dst);
        walk(kept_, [&](int64_t soff, int64_t doff) {
            if (get(o, doff) != lowest_) return;
            bool seen = false;
            walk(red_, [&](int64_t roff, int64_t) {
                seen = seen || get(s, soff + roff) == lowest_;
            });
            put(o, doff, seen ? lowest_ : neg_inf_);
        });
    }

private:
    uint32_t get(const uint8_t *b, int64_t i) const {
        if (esz_ == 2) {
            uint16_t h;
            std::memcpy(&h, b + i * 2, 2);
            return h;
        }
        uint32_t v;
        std::memcpy(&v, b + i * 4, 4);
        return v;
    }
    void put(uint8_t *b, int64_t i, uint32_t v) const {
        if (esz_ == 2) {
            const auto h = static_cast<uint16_t>(v);
            std::memcpy(b + i * 2, &h, 2);
        } else {
            std::memcpy(b + i * 4, &v, 4);
        }
    }
    // f(src offset, dst offset) over every index of dims (in elements),
    // the last dim in a plain loop.
    template <typename F>
    void walk(const std::vector<int> &dims, const F &f) const {
        const int n = static_cast<int>(dims.size());
        if (n == 0) return f(0, 0);
        auto dim = [&](int k) { return static_cast<size_t>(dims[static_cast<size_t>(k)]); };
        const int64_t len = p_.dims[dim(n - 1)], ss = p_.src_strides[dim(n - 1)],
                      ds = p_.dst_strides[dim(n - 1)];
        int64_t idx[16] = {};
        for (;;) {
            int64_t so = 0, dso = 0;
            for (int k = 0; k + 1 < n; ++k) {
                so += idx[k] * p_.src_strides[dim(k)];
                dso += idx[k] * p_.dst_strides[dim(k)];
            }
            for (int64_t i = 0; i < len; ++i) f(so + i * ss, dso + i * ds);
            int k = n - 2;
            while (k >= 0 && ++idx[k] == p_.dims[dim(k)]) idx[k--] = 0;
            if (k < 0) return;
        }
    }

    reduce_problem p_;
    std::vector<int> kept_, red_;
    uint32_t lowest_ = 0, neg_inf_ = 0;
    int esz_ = 4;
};

class dnnl_reduce_kernel final : public kernel {
public:
    dnnl_reduce_kernel(dnnl::engine eng, dnnl::reduction::primitive_desc pd,
            const reduce_problem &p)
        : fixup_(p)
        , eng_(std::move(eng))
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
        // oneDNN's maxes raise the invalid flag on NaN: the calling thread
        // runs them masked and gets its own flags back. Its OpenMP workers
        // keep the environment they were created in (dispatch.cpp).
        const masked_fp_scope fp_env;
        // The C API takes a prebuilt argument array: no std::unordered_map
        // per call on our side (the C++ execute() builds one).
        if (dnnl_primitive_execute(prim_.get(), stream_.get(), nargs_, args_)
                == dnnl_success) {
            dnnl_stream_wait(stream_.get());
            fixup_.apply(inputs[0], outputs[0]);
        }
    }

    std::string name() const override { return name_; }

private:
    lowest_fixup fixup_;
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
        // check_problem guarantees a reduced dim > 1, so the view has rank >= 1.
        const dnnl_view v = canonicalise(p);
        dnnl::memory::desc src_md(v.dims, ddt, v.src_strides);
        dnnl::memory::desc dst_md(v.dst_dims, ddt, v.dst_strides);

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
        return std::make_shared<dnnl_reduce_kernel>(eng, pd, p);
    } catch (const dnnl::error &e) {
        fail(why_not, std::string("oneDNN error: ") + e.what());
    } catch (const std::exception &e) {
        fail(why_not, std::string("error: ") + e.what());
    }
    return nullptr;
}

} // namespace crest::impl::dnnl_backend
