#include "crest/engine.hpp"

#include "src/engine_impl.hpp"

namespace crest {

engine::engine(kind akind, size_t index)
    : engine(akind, index, engine_options {}) {}

engine::engine(kind akind, size_t index, const engine_options &options)
    : impl_(std::make_shared<impl>(akind, index, options)) {}

engine::kind engine::get_kind() const { return impl_->kind; }
int engine::get_num_threads() const { return impl_->pool.size(); }
const engine_options &engine::get_options() const { return impl_->options; }

stream::stream(const engine &eng) : engine_(eng) {}

tensor::tensor(const logical_tensor &lt, const engine &eng, void *handle)
    : lt_(lt), engine_(eng), handle_(handle) {}

const char *to_string(engine::kind k) {
    switch (k) {
        case engine::kind::any: return "any";
        case engine::kind::cpu: return "cpu";
        case engine::kind::gpu: return "gpu";
    }
    return "?";
}

} // namespace crest
