// graph, partition and compiled_partition. Mirrors dnnl::graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "crest/engine.hpp"
#include "crest/error.hpp"
#include "crest/logical_tensor.hpp"
#include "crest/op.hpp"

namespace crest {

enum class fpmath_mode { strict = 0, bf16, f16, tf32, any };
const char *to_string(fpmath_mode m);

class compiled_partition;

class partition {
public:
    enum class policy {
        fusion = 1,  // fuse what the patterns allow
        debug = 2,   // one op per partition
    };

    partition() = default;

    bool is_supported() const;
    // Why an unsupported partition is unsupported (empty when supported).
    const std::string &get_unsupported_reason() const;
    size_t get_id() const;
    size_t get_ops_num() const;
    std::vector<size_t> get_ops() const;
    std::vector<logical_tensor> get_input_ports() const;
    std::vector<logical_tensor> get_output_ports() const;
    engine::kind get_engine_kind() const;
    // Name of the fusion pattern that made this partition.
    const std::string &get_pattern_name() const;

    // inputs: concrete logical tensors for every input port (any order);
    // outputs: for every output port, strided or layout any.
    compiled_partition compile(const std::vector<logical_tensor> &inputs,
            const std::vector<logical_tensor> &outputs,
            const engine &eng) const;

    struct impl;
    explicit partition(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}

private:
    std::shared_ptr<const impl> impl_;
};

class compiled_partition {
public:
    compiled_partition() = default;

    // The compiled form of an input or output port (layout any resolved).
    logical_tensor query_logical_tensor(size_t tid) const;
    std::vector<logical_tensor> get_input_ports() const;
    std::vector<logical_tensor> get_output_ports() const;

    // Runs synchronously. Refuses, writing nothing, when a tensor's shape
    // differs from the compiled one, a handle is null, or an axes tensor's
    // values disagree with the compiled output shape.
    void execute(stream &strm, const std::vector<tensor> &inputs,
            const std::vector<tensor> &outputs) const;

    // The kernel chosen at compile time, e.g. "jit:avx512:reduce_vertical".
    std::string get_kernel_name() const;

    struct impl;
    explicit compiled_partition(std::shared_ptr<impl> p)
        : impl_(std::move(p)) {}

private:
    std::shared_ptr<impl> impl_;
};

class graph {
public:
    explicit graph(engine::kind ekind,
            fpmath_mode mode = fpmath_mode::strict);

    // Validates the op against its schema (attributes, arity, types);
    // throws crest::error naming the op on a mismatch.
    void add_op(const op &aop, bool allow_exists = false);
    // Resolves edges, checks producers and cycles, infers shapes.
    void finalize();
    bool is_finalized() const;
    std::vector<partition> get_partitions(
            partition::policy pol = partition::policy::fusion);

    engine::kind get_engine_kind() const;
    fpmath_mode get_fpmath_mode() const;
    // The ops as added; after finalize, with inferred shapes filled in.
    std::vector<op> get_ops() const;

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

} // namespace crest
