// Reference ReduceMax: for every dst element (the kept index space), walk
// the reduced index space in row-major order and keep the largest element.
// Deliberately naive; speed is the job of the other backends.
#include <cstdint>
#include <limits>
#include <string>

#include "backend/ref/ref_backend.hpp"
#include "backend/ref/ref_half.hpp"
#include "crest/error.hpp"

namespace crest::impl::ref {

namespace {

constexpr int max_rank = 12;

// Reads element i of a buffer as f32 plus its raw bits (the bits are what
// we write back, so the result is exactly one of the inputs).
struct element {
    float value;
    uint32_t bits;
};

element load(data_type dt, const void *base, int64_t i) {
    if (dt == data_type::f32) {
        uint32_t b = static_cast<const uint32_t *>(base)[i];
        return {bits_to_f32(b), b};
    }
    uint16_t h = static_cast<const uint16_t *>(base)[i];
    float v = dt == data_type::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
    return {v, h};
}

void store(data_type dt, void *base, int64_t i, uint32_t bits) {
    if (dt == data_type::f32)
        static_cast<uint32_t *>(base)[i] = bits;
    else
        static_cast<uint16_t *>(base)[i] = static_cast<uint16_t>(bits);
}

uint32_t neg_inf_bits(data_type dt) {
    switch (dt) {
        case data_type::f32: return 0xFF800000u;
        case data_type::bf16: return 0xFF80u;
        default: return 0xFC00u; // f16
    }
}

// The quiet bit of each format: the top mantissa bit.
uint32_t quiet_bit(data_type dt) {
    switch (dt) {
        case data_type::f32: return 0x00400000u;
        case data_type::bf16: return 0x0040u;
        default: return 0x0200u; // f16
    }
}

// Odometer over a subset of dims. Returns false once every index wrapped.
bool next_index(const reduce_problem &p, const int *which, int n,
        int64_t *idx) {
    for (int k = n - 1; k >= 0; --k) {
        if (++idx[k] < p.dims[which[k]]) return true;
        idx[k] = 0;
    }
    return false;
}

} // namespace

void reduce_max(const reduce_problem &p, const void *src, void *dst) {
    const int nd = p.ndims();
    int kept[max_rank], red[max_rank];
    int nk = 0, nr = 0;
    bool kept_empty = false, red_empty = false;
    for (int d = 0; d < nd; ++d) {
        if (p.is_reduced(d)) {
            red[nr++] = d;
            red_empty = red_empty || p.dims[d] == 0;
        } else {
            kept[nk++] = d;
            kept_empty = kept_empty || p.dims[d] == 0;
        }
    }
    if (kept_empty) return; // no dst element exists

    const data_type dt = p.dt;
    int64_t ki[max_rank] = {0}; // kept index; rank 0 visits one element
    do {
        int64_t src_base = 0, dst_off = 0;
        for (int k = 0; k < nk; ++k) {
            src_base += ki[k] * p.src_strides[kept[k]];
            dst_off += ki[k] * p.dst_strides[kept[k]];
        }
        if (red_empty) {
            store(dt, dst, dst_off, neg_inf_bits(dt));
            continue;
        }
        int64_t ri[max_rank] = {0};
        bool have = false;
        element best {0.f, 0};
        do {
            int64_t off = src_base;
            for (int r = 0; r < nr; ++r)
                off += ri[r] * p.src_strides[red[r]];
            element e = load(dt, src, off);
            if (e.value != e.value) { // first NaN decides the result
                best = e;
                best.bits |= quiet_bit(dt);
                break;
            }
            // Strict '>' keeps the first of equal values (ties, +-0).
            if (!have || e.value > best.value) best = e;
            have = true;
        } while (next_index(p, red, nr, ri));
        store(dt, dst, dst_off, best.bits);
    } while (next_index(p, kept, nk, ki));
}

namespace {

void check_problem(const reduce_problem &p) {
    auto fail = [](const std::string &what) {
        throw error(status::invalid_arguments, "ref:reduce_max: " + what);
    };
    if (p.dt != data_type::f32 && p.dt != data_type::bf16
            && p.dt != data_type::f16)
        fail("data type #" + std::to_string(static_cast<int>(p.dt))
                + " is not one of f32, bf16, f16");
    const int nd = p.ndims();
    if (nd > max_rank)
        fail("rank " + std::to_string(nd) + " is above "
                + std::to_string(max_rank));
    if (p.src_strides.size() != p.dims.size()
            || p.dst_strides.size() != p.dims.size())
        fail("src_strides and dst_strides must have rank "
                + std::to_string(nd));
    if (nd < 32 && (p.reduce_mask >> nd) != 0)
        fail("reduce_mask " + std::to_string(p.reduce_mask)
                + " names a dim at or above rank " + std::to_string(nd));
    for (int d = 0; d < nd; ++d) {
        if (p.dims[d] < 0 || p.src_strides[d] < 0 || p.dst_strides[d] < 0)
            fail("dim " + std::to_string(d)
                    + " has a negative size or stride");
    }
    // Offsets are int64: the furthest element of src and dst must fit.
    const int64_t limit = std::numeric_limits<int64_t>::max();
    for (const dims_t *st : {&p.src_strides, &p.dst_strides}) {
        int64_t last = 0;
        for (int d = 0; d < nd; ++d) {
            const int64_t n = p.dims[d] > 0 ? p.dims[d] - 1 : 0;
            const int64_t s = (*st)[d];
            if (n > 0 && s > 0 && (s > limit / n || last > limit - s * n))
                fail("dim " + std::to_string(d) + " (size "
                        + std::to_string(p.dims[d]) + ", stride "
                        + std::to_string(s) + ") overflows 64-bit offsets");
            last += n * s;
        }
    }
}

class reduce_max_kernel : public kernel {
public:
    explicit reduce_max_kernel(const reduce_problem &p) : p_(p) {}
    void execute(const void *const *inputs,
            void *const *outputs) const override {
        reduce_max(p_, inputs[0], outputs[0]);
    }
    std::string name() const override { return "ref:reduce_max"; }

private:
    reduce_problem p_;
};

} // namespace

kernel_ptr make_reduce_max(const reduce_problem &p) {
    check_problem(p);
    return std::make_shared<reduce_max_kernel>(p);
}

} // namespace crest::impl::ref
