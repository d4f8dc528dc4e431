// engine, stream and tensor. Mirrors dnnl::graph / dnnl engine and stream.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "crest/logical_tensor.hpp"

namespace crest {

// crest extension: how an engine runs what is compiled for it.
struct engine_options {
    // Threads of the engine's oneTBB task arena; 0 = every core.
    int num_threads = 0;
    // Which backends compile may choose from: "" (all: the fastest that
    // fits), "ref", "jit" or "dnnl". A partition no allowed backend can run
    // fails to compile with status::unimplemented.
    std::string backend;
};

class engine {
public:
    enum class kind { any = 0, cpu, gpu };

    explicit engine(kind akind = kind::cpu, size_t index = 0);
    engine(kind akind, size_t index, const engine_options &options);

    kind get_kind() const;
    int get_num_threads() const;
    const engine_options &get_options() const;

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
