// op: id, kind, name, typed attributes, input and output logical tensors.
// Mirrors dnnl::graph::op; kinds crest does not know are kept by name and
// become unsupported partitions.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "crest/logical_tensor.hpp"

namespace crest {

// The attribute types of the oneDNN Graph JSON format:
// s64, s64[], f32, f32[], bool, string.
using attribute_value = std::variant<int64_t, std::vector<int64_t>, float,
        std::vector<float>, bool, std::string>;

class op {
public:
    enum class kind {
        // max family
        ReduceMax,
        Maximum,
        ArgMax,
        // binary post-ops
        Add,
        Subtract,
        Multiply,
        Divide,
        Minimum,
        // unary post-ops
        Abs,
        Clamp,
        Exp,
        GELU,
        LeakyReLU,
        Log,
        ReLU,
        Sigmoid,
        Sqrt,
        Square,
        Tanh,
        // graph-level
        Wildcard,
        End,
        // a kind crest does not know; its name is kept (see get_kind_name)
        Unknown,
    };

    enum class attr {
        axes,
        keep_dims,
        auto_broadcast,
        axis,
        select_last_index,
        min,
        max,
        alpha,
        mode,
    };

    op(size_t id, kind akind, const std::string &name = "");
    op(size_t id, kind akind, const std::vector<logical_tensor> &inputs,
            const std::vector<logical_tensor> &outputs,
            const std::string &name = "");
    // By kind name as in JSON files ("ReduceMax"); unknown names give
    // kind::Unknown with the name kept.
    op(size_t id, const std::string &kind_name, const std::string &name = "");

    void add_input(const logical_tensor &t);
    void add_inputs(const std::vector<logical_tensor> &ts);
    void add_output(const logical_tensor &t);
    void add_outputs(const std::vector<logical_tensor> &ts);

    op &set_attr(attr name, const attribute_value &value);
    // By attribute name (as in JSON files); unknown names are kept.
    op &set_attr(const std::string &name, const attribute_value &value);

    size_t get_id() const;
    kind get_kind() const;
    const std::string &get_kind_name() const;
    const std::string &get_name() const;
    const std::vector<logical_tensor> &get_inputs() const;
    const std::vector<logical_tensor> &get_outputs() const;
    const std::map<std::string, attribute_value> &get_attrs() const;

    // Internal representation; shared, copy-on-write is not needed because
    // a graph copies the op when it is added.
    struct impl;
    const impl &get_impl() const { return *impl_; }

private:
    std::shared_ptr<impl> impl_;
    void detach();
};

const char *to_string(op::kind k);
const char *to_string(op::attr a);
// Parses "ReduceMax" etc.; returns op::kind::Unknown for other names.
op::kind op_kind_from_string(const std::string &name);

} // namespace crest
