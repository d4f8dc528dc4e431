// engine, stream and tensor. Mirrors dnnl::graph / dnnl engine and stream.
#pragma once

#include <cstddef>
#include <memory>

#include "crest/logical_tensor.hpp"

namespace crest {

class engine {
public:
    enum class kind { any = 0, cpu, gpu };

    // num_threads = 0 uses every core. The engine owns a oneTBB task arena
    // of that size; every partition compiled for it runs there.
    explicit engine(kind akind = kind::cpu, size_t index = 0,
            int num_threads = 0);

    kind get_kind() const;
    int get_num_threads() const;

    struct impl;
    const std::shared_ptr<impl> &get_impl() const { return impl_; }

private:
    std::shared_ptr<impl> impl_;
};

class stream {
public:
    explicit stream(const engine &eng);
    const engine &get_engine() const { return engine_; }
    // Execution is synchronous on the CPU; wait() returns at once.
    void wait() {}

private:
    engine engine_;
};

// A logical tensor bound to memory the caller owns.
class tensor {
public:
    tensor() = default;
    tensor(const logical_tensor &lt, const engine &eng, void *handle);

    void *get_data_handle() const { return handle_; }
    void set_data_handle(void *handle) { handle_ = handle; }
    const logical_tensor &get_logical_tensor() const { return lt_; }
    const engine &get_engine() const { return engine_; }

private:
    logical_tensor lt_;
    engine engine_;
    void *handle_ = nullptr;
};

const char *to_string(engine::kind k);

} // namespace crest
