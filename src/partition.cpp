// partition::compile and compiled_partition::execute: the API boundary
// where port tensors are matched by id and checked before any kernel runs.
#include <array>
#include <chrono>

#include "src/exec/executable.hpp"
#include "src/graph_impl.hpp"
#include "src/op_schema.hpp"
#include "src/verbose.hpp"

namespace crest {

namespace ci = ::crest::impl;

struct compiled_partition::impl {
    std::shared_ptr<const partition::impl> part;
    std::unique_ptr<ci::executable> exe;
    engine eng;
    std::string log_tensors;  // for CREST_VERBOSE
};

namespace {

constexpr size_t max_ports = 16;

std::string partition_label(const partition::impl &p) {
    std::string s = "partition " + std::to_string(p.id) + " (";
    for (size_t i = 0; i < p.ops.size(); ++i)
        s += (i ? ", " : "") + ci::op_label(*p.ops[i]);
    return s + ")";
}

[[noreturn]] void part_error(
        status st, const partition::impl &p, const std::string &what) {
    throw error(st, partition_label(p) + ": " + what);
}

// The given tensors in port order, matched by id.
std::vector<logical_tensor> match_ports(const partition::impl &p,
        const std::vector<logical_tensor> &ports,
        const std::vector<logical_tensor> &given, const char *role) {
    std::vector<logical_tensor> out;
    for (const auto &port : ports) {
        const logical_tensor *hit = nullptr;
        for (const auto &g : given)
            if (g.get_id() == port.get_id()) hit = &g;
        if (!hit)
            part_error(status::invalid_arguments, p,
                    std::string("no ") + role + " logical tensor for port id "
                            + std::to_string(port.get_id()));
        if (hit->get_data_type() != port.get_data_type())
            part_error(status::invalid_data_type, p,
                    std::string(role) + " id " + std::to_string(port.get_id())
                            + " has data type " + to_string(hit->get_data_type())
                            + "; the graph says " + to_string(port.get_data_type()));
        out.push_back(*hit);
    }
    if (given.size() != ports.size())
        part_error(status::invalid_arguments, p,
                std::to_string(given.size()) + " " + role
                        + " logical tensors given; expected "
                        + std::to_string(ports.size()));
    return out;
}

void check_compile_input(const partition::impl &p, const logical_tensor &t,
        const logical_tensor &port) {
    const std::string who = "input id " + std::to_string(t.get_id());
    const auto problem = ci::tensor_shape_problem(t);
    if (!problem.empty()) part_error(status::invalid_shape, p, who + " " + problem);
    if (!t.has_known_shape())
        part_error(status::invalid_shape, p, who + " has an unknown shape at compile");
    if (t.get_layout_type() != logical_tensor::layout_type::strided)
        part_error(status::invalid_arguments, p,
                who + " has layout " + to_string(t.get_layout_type())
                        + "; expected strided");
    for (auto s : t.get_strides())
        if (s < 0)
            part_error(status::invalid_shape, p,
                    who + " has strides " + ci::dims_to_string(t.get_strides())
                            + "; expected known, non-negative strides");
    if (port.get_ndims() >= 0) {
        bool ok = port.get_ndims() == t.get_ndims();
        for (size_t i = 0; ok && i < t.get_dims().size(); ++i)
            ok = port.get_dims()[i] < 0 || port.get_dims()[i] == t.get_dims()[i];
        if (!ok)
            part_error(status::invalid_shape, p,
                    who + " has shape " + ci::dims_to_string(t.get_dims())
                            + " but the graph says "
                            + ci::dims_to_string(port.get_dims()));
    }
}

// Fills ptrs in port order from tensors matched by id; checks each against
// the compiled logical tensor. No allocation on the success path.
template <typename Ptr>
void bind_tensors(const partition::impl &p, const std::vector<logical_tensor> &compiled,
        const std::vector<tensor> &given, const char *role,
        std::array<Ptr, max_ports> &ptrs) {
    if (given.size() != compiled.size())
        part_error(status::invalid_arguments, p,
                std::to_string(given.size()) + " " + role
                        + " tensors given; expected " + std::to_string(compiled.size()));
    for (size_t i = 0; i < compiled.size(); ++i) {
        const auto &want = compiled[i];
        const tensor *hit = nullptr;
        for (const auto &g : given)
            if (g.get_logical_tensor().get_id() == want.get_id()) hit = &g;
        const std::string who = std::string(role) + " tensor id " + std::to_string(want.get_id());
        if (!hit) part_error(status::invalid_arguments, p, "no " + who);
        const auto &lt = hit->get_logical_tensor();
        if (lt.get_data_type() != want.get_data_type())
            part_error(status::invalid_data_type, p,
                    who + " has data type " + to_string(lt.get_data_type())
                            + "; compiled for " + to_string(want.get_data_type()));
        if (lt.get_dims() != want.get_dims())
            part_error(status::invalid_shape, p,
                    who + " has shape " + ci::dims_to_string(lt.get_dims())
                            + " but the partition was compiled for "
                            + ci::dims_to_string(want.get_dims()));
        if (lt.get_layout_type() == logical_tensor::layout_type::strided
                && lt.get_strides() != want.get_strides())
            part_error(status::invalid_shape, p,
                    who + " has strides " + ci::dims_to_string(lt.get_strides())
                            + " but the partition was compiled for "
                            + ci::dims_to_string(want.get_strides()));
        if (!hit->get_data_handle() && want.get_mem_size() > 0)
            part_error(status::invalid_arguments, p, who + " has a null data handle");
        ptrs[i] = static_cast<Ptr>(hit->get_data_handle());
    }
}

} // namespace

bool partition::is_supported() const { return impl_ && impl_->supported; }
const std::string &partition::get_unsupported_reason() const { return impl_->reason; }
size_t partition::get_id() const { return impl_->id; }
size_t partition::get_ops_num() const { return impl_->ops.size(); }
std::vector<size_t> partition::get_ops() const {
    std::vector<size_t> ids;
    for (const auto &o : impl_->ops) ids.push_back(o->id);
    return ids;
}
std::vector<logical_tensor> partition::get_input_ports() const { return impl_->inputs; }
std::vector<logical_tensor> partition::get_output_ports() const { return impl_->outputs; }
engine::kind partition::get_engine_kind() const { return impl_->ekind; }
const std::string &partition::get_pattern_name() const { return impl_->pattern_name; }

compiled_partition partition::compile(const std::vector<logical_tensor> &inputs,
        const std::vector<logical_tensor> &outputs, const engine &eng) const {
    if (!impl_) throw error(status::invalid_arguments, "compile of an empty partition");
    const auto &p = *impl_;
    if (!p.supported)
        part_error(status::unimplemented, p, "is not supported: " + p.reason);
    if (eng.get_kind() != p.ekind)
        part_error(status::invalid_arguments, p,
                std::string("engine kind ") + to_string(eng.get_kind())
                        + " differs from the graph's " + to_string(p.ekind));
    auto ins = match_ports(p, p.inputs, inputs, "input");
    auto outs = match_ports(p, p.outputs, outputs, "output");
    if (ins.size() > max_ports || outs.size() > max_ports)
        part_error(status::unimplemented, p, "more than 16 ports");
    for (size_t i = 0; i < ins.size(); ++i) check_compile_input(p, ins[i], p.inputs[i]);
    auto cp = std::make_shared<compiled_partition::impl>(
            compiled_partition::impl {impl_, p.compile(p, ins, outs, eng), eng, ""});
    // Only the verbose log reads it; formatting it costs a quarter of a
    // cold first compile.
    if (ci::verbose_enabled())
        cp->log_tensors = ci::describe_tensors(cp->exe->inputs, cp->exe->outputs);
    return compiled_partition(std::move(cp));
}

logical_tensor compiled_partition::query_logical_tensor(size_t tid) const {
    for (const auto &t : impl_->exe->inputs)
        if (t.get_id() == tid) return t;
    for (const auto &t : impl_->exe->outputs)
        if (t.get_id() == tid) return t;
    throw error(status::invalid_arguments,
            partition_label(*impl_->part) + ": no port with tensor id "
                    + std::to_string(tid));
}

std::vector<logical_tensor> compiled_partition::get_input_ports() const {
    return impl_->exe->inputs;
}
std::vector<logical_tensor> compiled_partition::get_output_ports() const {
    return impl_->exe->outputs;
}

std::string compiled_partition::get_kernel_name() const {
    return impl_->exe->kernel_name();
}

void compiled_partition::execute(stream &strm, const std::vector<tensor> &inputs,
        const std::vector<tensor> &outputs) const {
    if (!impl_) throw error(status::invalid_arguments, "execute of an empty compiled_partition");
    const auto &p = *impl_->part;
    if (strm.get_engine().get_impl() != impl_->eng.get_impl())
        part_error(status::invalid_arguments, p,
                "the stream's engine is not the engine the partition was compiled for");
    std::array<const void *, max_ports> in {};
    std::array<void *, max_ports> out {};
    bind_tensors(p, impl_->exe->inputs, inputs, "input", in);
    bind_tensors(p, impl_->exe->outputs, outputs, "output", out);
    if (!ci::verbose_enabled()) {
        impl_->exe->execute(in.data(), out.data());
        return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    impl_->exe->execute(in.data(), out.data());
    const auto t1 = std::chrono::steady_clock::now();
    ci::verbose_exec(impl_->exe->kernel_name(), p.pattern_name, impl_->log_tensors,
            std::chrono::duration<double, std::milli>(t1 - t0).count());
}

} // namespace crest
