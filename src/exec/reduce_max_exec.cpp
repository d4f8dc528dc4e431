#include "src/exec/reduce_max_exec.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "src/exec/dispatch.hpp"
#include "src/lowering.hpp"
#include "src/ops/shape_rules.hpp"

namespace crest::impl {
namespace {

std::string port_name(const logical_tensor &t, const char *name) {
    return std::string(name) + " (id " + std::to_string(t.get_id()) + ")";
}

// Strides for a dst of layout `any` (or strided without strides): dense,
// its dims nested like the src dims they come from (decreasing src stride,
// ties outer first). Frameworks allocate outputs like their inputs
// (channels-last in, channels-last out, as PyTorch's reductions do), and a
// reduction over outer dims then writes its columns in src order instead
// of transposing them. Row-major when src is, and when dst's dims cannot
// be matched to src's (axes read at execution, keep_dims false).
dims_t any_dst_strides(const dims_t &dims, const logical_tensor &src,
        const std::optional<std::vector<int64_t>> &axes) {
    const dims_t &ss = src.get_strides();
    const size_t rank = ss.size();
    std::vector<size_t> from;  // the src dim of each dst dim
    if (dims.size() == rank) {
        for (size_t d = 0; d < rank; ++d) from.push_back(d);
    } else if (axes) {
        for (size_t d = 0; d < rank; ++d)
            if (std::find(axes->begin(), axes->end(), int64_t(d)) == axes->end()) from.push_back(d);
    }
    bool usable = from.size() == dims.size();
    for (auto s : ss) usable = usable && s >= 0;
    for (auto d : dims) usable = usable && d >= 0;
    if (!usable) return dense_strides(dims);
    std::vector<size_t> order(dims.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ss[from[a]] > ss[from[b]]; });
    // Row-major strides of the dims in that order, put back in dst's order.
    dims_t nested(dims.size()), strides(dims.size());
    for (size_t k = 0; k < order.size(); ++k) nested[k] = dims[order[k]];
    const dims_t nested_strides = dense_strides(nested);
    for (size_t k = 0; k < order.size(); ++k) strides[order[k]] = nested_strides[k];
    return strides;
}

// The compiled dst: dims from inference (or given, for axes read at
// execution), layout any resolved by any_dst_strides.
logical_tensor resolve_dst(const op::impl &o, const logical_tensor &given,
        const logical_tensor &port, const logical_tensor &src,
        const std::optional<std::vector<int64_t>> &axes,
        const std::optional<dims_t> &inferred) {
    dims_t dims;
    if (inferred) {
        if (given.get_ndims() >= 0) {
            bool same = given.get_dims().size() == inferred->size();
            for (size_t i = 0; same && i < inferred->size(); ++i)
                same = given.get_dims()[i] < 0 || given.get_dims()[i] == (*inferred)[i];
            if (!same)
                fail(status::invalid_shape, o,
                        "output " + port_name(given, "'dst'") + " has shape "
                                + dims_to_string(given.get_dims())
                                + " but the compiled source gives "
                                + dims_to_string(*inferred));
        }
        dims = *inferred;
    } else if (given.has_known_shape()) {
        dims = given.get_dims();
    } else if (port.has_known_shape()) {
        dims = port.get_dims();
    } else {
        fail(status::invalid_shape, o,
                "output " + port_name(given, "'dst'")
                        + " has an unknown shape; with axes from an input "
                          "tensor the output shape must be known at compile");
    }
    const bool strided_known = given.get_layout_type()
                    == logical_tensor::layout_type::strided
            && given.get_strides().size() == dims.size();
    bool known = strided_known;
    for (auto s : given.get_strides()) known = known && s >= 0;
    return logical_tensor(given.get_id(), given.get_data_type(), dims,
            known ? given.get_strides() : any_dst_strides(dims, src, axes),
            given.get_property_type());
}

class reduce_max_executable : public executable {
public:
    reduce_max_executable(const op::impl &o, fpmath_mode mode, const engine &eng)
        : op_(o), mode_(mode), engine_(eng) {}

    void compile_fixed(const std::vector<int64_t> &axes) {
        fixed_ = select_reduce_max_kernel(make_problem(axes), mode_, engine_);
    }

    void execute(const void *const *in, void *const *out) const override {
        const void *src = in[0];
        void *dst = out[0];
        if (fixed_) {
            fixed_->execute(&src, &dst);
            return;
        }
        kernel_for(read_axes_mask(in[1]))->execute(&src, &dst);
    }

    std::string kernel_name() const override {
        if (fixed_) return fixed_->name();
        std::lock_guard<std::mutex> lock(mutex_);
        return by_mask_.empty() ? "chosen at execution (axes input)"
                                : by_mask_.rbegin()->second->name();
    }

private:
    reduce_problem make_problem(const std::vector<int64_t> &axes) const {
        return make_reduce_problem(inputs[0], outputs[0], axes,
                attr_bool(op_, "keep_dims"));
    }

    // Reads and checks the s32 axes tensor without allocating; a refusal
    // throws before anything is written.
    uint32_t read_axes_mask(const void *axes_data) const {
        const auto &ax = inputs[1];
        const int64_t k = ax.get_dims()[0];
        const int64_t stride = ax.get_strides().empty() ? 1 : ax.get_strides()[0];
        const int64_t rank = inputs[0].get_ndims();
        const auto *v = static_cast<const int32_t *>(axes_data);
        uint32_t mask = 0;
        for (int64_t i = 0; i < k; ++i) {
            const int64_t a = v[i * stride];
            if (a < -rank || a > rank - 1 || (mask >> (a < 0 ? a + rank : a)) & 1u) {
                std::vector<int64_t> all;
                for (int64_t j = 0; j < k; ++j) all.push_back(v[j * stride]);
                normalize_axes(op_, all, rank, "input axes");  // throws the message
            }
            mask |= 1u << (a < 0 ? a + rank : a);
        }
        // The values must give the compiled output shape.
        const bool keep = attr_bool(op_, "keep_dims") || mask == 0;
        const auto &sd = inputs[0].get_dims();
        const auto &dd = outputs[0].get_dims();
        bool same = true;
        size_t j = 0;
        for (int64_t d = 0; d < rank && same; ++d) {
            const bool red = (mask >> d) & 1u;
            if (red && !keep) continue;
            same = j < dd.size() && dd[j] == (red ? 1 : sd[d]);
            ++j;
        }
        if (!same || j != dd.size()) {
            std::vector<int64_t> axes;
            for (int64_t d = 0; d < rank; ++d)
                if ((mask >> d) & 1u) axes.push_back(d);
            fail(status::invalid_arguments, op_,
                    "input axes values " + dims_to_string(axes) + " give output shape "
                            + dims_to_string(reduced_dims(sd, axes, keep))
                            + " but the partition was compiled for "
                            + dims_to_string(dd) + "; nothing was written");
        }
        return mask;
    }

    // Kernels per set of axes values, made once and reused.
    const kernel *kernel_for(uint32_t mask) const {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = by_mask_.find(mask);
        if (it != by_mask_.end()) return it->second.get();
        std::vector<int64_t> axes;
        for (int d = 0; d < 32; ++d)
            if ((mask >> d) & 1u) axes.push_back(d);
        auto k = select_reduce_max_kernel(make_problem(axes), mode_, engine_);
        return by_mask_.emplace(mask, std::move(k)).first->second.get();
    }

    op::impl op_;
    fpmath_mode mode_;
    engine engine_;
    kernel_ptr fixed_;
    mutable std::mutex mutex_;
    mutable std::map<uint32_t, kernel_ptr> by_mask_;
};

} // namespace

std::unique_ptr<executable> compile_reduce_max(const partition::impl &p,
        const std::vector<logical_tensor> &inputs,
        const std::vector<logical_tensor> &outputs, const engine &eng) {
    const op::impl &o = *p.ops.front();
    const auto &src = inputs[0];
    auto exe = std::make_unique<reduce_max_executable>(o, p.mode, eng);
    exe->inputs = inputs;
    const int64_t rank = src.get_ndims();
    const auto axes = reduce_attr_axes(o, rank);
    if (!axes) {
        const auto &ax = inputs[1];
        if (ax.get_ndims() != 1)
            fail(status::invalid_shape, o,
                    "input " + port_name(ax, "'axes'") + " has rank "
                            + std::to_string(ax.get_ndims()) + "; expected 1");
    }
    std::optional<dims_t> inferred;
    if (axes) inferred = reduced_dims(src.get_dims(), *axes, attr_bool(o, "keep_dims"));
    exe->outputs = {resolve_dst(o, outputs[0], p.outputs[0], src, axes, inferred)};
    if (!axes) {
        // The rank of dst must fit keep_dims and the number of axes.
        const int64_t k = inputs[1].get_dims()[0];
        const int64_t want = attr_bool(o, "keep_dims") || k == 0 ? rank : rank - k;
        if (exe->outputs[0].get_ndims() != want)
            fail(status::invalid_shape, o,
                    "output 'dst' has rank " + std::to_string(exe->outputs[0].get_ndims())
                            + " but a rank-" + std::to_string(rank) + " source reduced over "
                            + std::to_string(k) + " input axes gives rank "
                            + std::to_string(want));
    }
    if (axes) exe->compile_fixed(*axes);
    return exe;
}

} // namespace crest::impl
