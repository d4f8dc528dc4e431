// What a supported partition compiles to: the compiled port tensors and a
// run function over raw handles (in port order).
#pragma once

#include <string>
#include <vector>

#include "crest/logical_tensor.hpp"

namespace crest::impl {

class executable {
public:
    virtual ~executable() = default;
    // Must not allocate on the common path; throws crest::error (writing
    // nothing) when data read at execution (an axes tensor) is refused.
    virtual void execute(const void *const *inputs, void *const *outputs) const = 0;
    virtual std::string kernel_name() const = 0;

    std::vector<logical_tensor> inputs;   // compiled, port order
    std::vector<logical_tensor> outputs;  // compiled, layout any resolved
};

} // namespace crest::impl
