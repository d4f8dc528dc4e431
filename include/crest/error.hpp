// The one error type of crest's API: a status plus a message that names the
// op, the tensor or attribute, what was seen and what was expected.
#pragma once

#include <stdexcept>
#include <string>

namespace crest {

enum class status {
    success = 0,
    out_of_memory,
    invalid_arguments,  // the caller's mistake: bad attribute, shape, type, handle
    unimplemented,      // valid, but crest cannot compute it (yet)
    invalid_graph,      // graph-level problem: cycle, two producers, bad edge
    invalid_graph_op,   // an op that does not match its schema
    invalid_shape,      // shapes that disagree with inference
    invalid_data_type,
    runtime_error,
};

const char *to_string(status s);

class error : public std::runtime_error {
public:
    error(status s, const std::string &message)
        : std::runtime_error(message), status_(s) {}
    status get_status() const { return status_; }

private:
    status status_;
};

} // namespace crest
