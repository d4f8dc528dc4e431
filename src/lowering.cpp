#include "src/lowering.hpp"

namespace crest::impl {

reduce_problem make_reduce_problem(const logical_tensor &src,
        const logical_tensor &dst, const std::vector<int64_t> &axes,
        bool keep_dims) {
    reduce_problem p;
    p.dt = src.get_data_type();
    p.dims = src.get_dims();
    p.src_strides = src.get_strides();
    for (auto a : axes) p.reduce_mask |= 1u << a;
    // dst keeps src's rank in the problem: stride 0 on reduced dims.
    const bool same_rank = keep_dims || axes.empty();
    const auto &ds = dst.get_strides();
    p.dst_strides.assign(p.dims.size(), 0);
    size_t j = 0;
    for (int d = 0; d < p.ndims(); ++d) {
        if (same_rank) {
            p.dst_strides[d] = p.is_reduced(d) ? 0 : ds[d];
        } else if (!p.is_reduced(d)) {
            p.dst_strides[d] = ds[j++];
        }
    }
    return p;
}

} // namespace crest::impl
