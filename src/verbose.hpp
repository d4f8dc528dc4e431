// CREST_VERBOSE=1 prints one line per execution (like ONEDNN_VERBOSE):
//   crest_verbose,exec,cpu,<kernel>,<pattern>,<tensors>,<ms>
#pragma once

#include <string>
#include <vector>

#include "crest/logical_tensor.hpp"

namespace crest::impl {

bool verbose_enabled();
// "src:f32:1x128x150x150:22500s... " for the log line.
std::string describe_tensors(const std::vector<logical_tensor> &ins,
        const std::vector<logical_tensor> &outs);
void verbose_exec(const std::string &kernel, const std::string &pattern,
        const std::string &tensors, double ms);

} // namespace crest::impl
