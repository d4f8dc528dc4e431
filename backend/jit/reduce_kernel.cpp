// The kernel object: walks a plan. Threads share work in static chunks of
// outputs (output split) or of one reduced dim (two-level: per-chunk f32
// partial results, then a combine). Nothing here allocates: partial results
// and the scatter buffer of a strided dst live on the stack of the call that
// uses them, which also makes concurrent execute calls independent.
#include <algorithm>
#include <cstring>

#include "backend/jit/isa.hpp"
#include "backend/jit/jit_backend.hpp"
#include "backend/jit/generators.hpp"
#include "backend/jit/outer_first.hpp"
#include "backend/jit/plan.hpp"
#include "backend/jit/run_range.hpp"
#include "backend/jit/scalar.hpp"
#include "src/threading.hpp"

namespace crest::impl::jit {

namespace {

class reduce_kernel : public kernel {
public:
    reduce_kernel(plan p, const thread_pool &pool)
        : p_(std::move(p)), pool_(pool) {}

    std::string name() const override { return p_.name; }

    void execute(const void *const *inputs, void *const *outputs) const override {
        const char *src = static_cast<const char *>(inputs[0]);
        char *dst = static_cast<char *>(outputs[0]);
        switch (p_.kind) {
            case plan_kind::empty: return;
            case plan_kind::fill: return fill(dst);
            case plan_kind::copy:
                return chunked(p_.n_out, 64, [&](int64_t b, int64_t e) { copy(src, dst, b, e); });
            case plan_kind::strided:
                return chunked(
                        p_.n_out, 16, [&](int64_t b, int64_t e) { strided(src, dst, b, e); });
            default: break;
        }
        if (p_.two_level) return two_level(src, dst);
        dst_view D = plan_dst_view(p_, dst);
        const red_ranges R = full_ranges(p_);
        chunked(p_.n_out, p_.out_align, [&](int64_t b, int64_t e) {
            with_tile_scratch(p_, [&](void *scratch) { run_range(p_, src, D, b, e, R, scratch); });
        });
    }

private:
    // Splits [0, n) into nchunks static ranges whose inner bounds are
    // multiples of align (plan::out_align: mostly whole dst lines a
    // thread; output_chunk_bound).
    template <typename F>
    void chunked(int64_t n, int64_t align, const F &f) const {
        const int nch = p_.nchunks;
        if (nch <= 1) return f(0, n);
        pool_.parallel_for(nch, [&](int64_t c) {
            f(output_chunk_bound(n, align, nch, c), output_chunk_bound(n, align, nch, c + 1));
        });
    }

    // Out of line: its 64 KiB of partials stay off the stack of the other
    // paths (decisions.md, Stack).
    __attribute__((noinline)) void two_level(const char *src, char *dst) const {
        alignas(64) char partial[partial_budget_elems * 4];
        const int64_t pstride = (p_.n_out + 15) / 16 * 16;
        const int nch = p_.nchunks;
        const int sp = p_.split;
        const red_ranges full = full_ranges(p_);
        const int64_t sn = full.hi[sp];
        const int64_t align = sp == p_.nextra + 1 ? 64 : 1;
        pool_.parallel_for(nch, [&](int64_t c) {
            red_ranges R = full;
            R.lo[sp] = output_chunk_bound(sn, align, nch, c);
            R.hi[sp] = output_chunk_bound(sn, align, nch, c + 1);
            dst_view D;
            D.base = partial + c * pstride * p_.esz;
            D.dsz = D.jds = p_.esz;
            D.sub = false;
            int64_t s = p_.jd.n * p_.esz;
            for (int k = p_.nouter - 1; k >= 0; --k) {
                D.ods[k] = s;
                s *= p_.outer[k].n;
            }
            D.fn = p_.code->fn;
            with_tile_scratch(
                    p_, [&](void *scratch) { run_range(p_, src, D, 0, p_.n_out, R, scratch); });
        });
        // Combine in the flat output order (flat_output_dims). Dense dst: the
        // chunks' partials are nch rows of a vertical reduction. The scalar
        // loop below cost 3-5 points of the roofline on Zen 4 (f16
        // 64x64x64x64 axes 0,2: 80% -> 85% with the kernel).
        if (p_.combine_code) {
            const vert_call a {partial, dst, p_.n_out, nch, pstride * p_.esz, 0, 1, 0, 0, nullptr,
                    nullptr, 1, 0};
            p_.combine_code->fn(&a);
            return;
        }
        loop_dim dims[2 * max_dims];
        odometer od(dims, flat_output_dims(p_, dims), 0);
        for (int64_t o = 0; o < p_.n_out; ++o, od.next()) {
            float v = scalar::load(partial + o * p_.esz, p_.dt);
            for (int c = 1; c < nch; ++c)
                v = scalar::nanmax(v, scalar::load(partial + (c * pstride + o) * p_.esz, p_.dt));
            scalar::store(dst + od.doff, v, p_.dt);
        }
    }

    void fill(char *dst) const {
        const float ninf = -__builtin_inff();
        odometer od(p_.kept, p_.nkept, 0);
        for (int64_t o = 0; o < p_.n_out; ++o, od.next())
            scalar::store(dst + od.doff, ninf, p_.dt);
    }

    void copy(const char *src, char *dst, int64_t b, int64_t e) const {
        if (b >= e) return;
        const int nk = p_.nkept;
        const bool contiguous = nk > 0 && p_.kept[nk - 1].ss == p_.esz
                && p_.kept[nk - 1].ds == p_.esz;
        if (!contiguous) {
            odometer od(p_.kept, nk, b);
            for (int64_t o = b; o < e; ++o, od.next())
                std::memcpy(dst + od.doff, src + od.soff, p_.esz);
            return;
        }
        const int64_t inner = p_.kept[nk - 1].n;
        int64_t j = b % inner;
        odometer od(p_.kept, nk - 1, b / inner);
        while (b < e) {
            const int64_t cnt = std::min(inner - j, e - b);
            std::memcpy(dst + od.doff + j * p_.esz, src + od.soff + j * p_.esz,
                    cnt * p_.esz);
            b += cnt;
            j = 0;
            od.next();
        }
    }

    void strided(const char *src, char *dst, int64_t b, int64_t e) const {
        if (b >= e) return;
        int64_t total = 1;
        for (int k = 0; k < p_.nred; ++k) total *= p_.red[k].n;
        odometer od(p_.kept, p_.nkept, b);
        for (int64_t o = b; o < e; ++o, od.next()) {
            float v = -__builtin_inff();
            odometer r(p_.red, p_.nred, 0);
            for (int64_t i = 0; i < total; ++i, r.next())
                v = scalar::nanmax(v, scalar::load(src + od.soff + r.soff, p_.dt));
            scalar::store(dst + od.doff, v, p_.dt);
        }
    }

    plan p_;
    const thread_pool &pool_;
};

} // namespace

kernel_ptr make_reduce_max(const reduce_problem &p, const thread_pool &pool,
        std::string *why_not) {
    plan P;
    if (!make_plan(p, max_isa(), pool.size(), &P, why_not)) return nullptr;
    outer_first_split s;
    if (split_outer_first(p, &s) && outer_first_preferred(P, s))
        if (kernel_ptr k = make_outer_first(s, pool, why_not)) return k;
    return std::make_shared<reduce_kernel>(std::move(P), pool);
}

} // namespace crest::impl::jit
