#pragma once

#include "crest/engine.hpp"
#include "crest/error.hpp"
#include "src/threading.hpp"

namespace crest {

struct engine::impl {
    engine::kind kind;
    size_t index;
    engine_options options;
    ::crest::impl::thread_pool pool;

    impl(engine::kind k, size_t i, const engine_options &o)
        : kind(k), index(i), options(o), pool(o.num_threads) {
        if (k != engine::kind::cpu)
            throw error(status::invalid_arguments,
                    std::string("engine: kind '") + to_string(k)
                            + "' is not supported; crest runs on cpu only");
        if (index != 0)
            throw error(status::invalid_arguments,
                    "engine: cpu index " + std::to_string(index)
                            + " does not exist; expected 0");
        const auto &b = o.backend;
        if (!(b.empty() || b == "any" || b == "ref" || b == "jit"
                    || b == "dnnl"))
            throw error(status::invalid_arguments,
                    "engine: backend '" + b
                            + "' is unknown; expected any, ref, jit or dnnl");
        if (o.num_threads < 0)
            throw error(status::invalid_arguments,
                    "engine: num_threads = " + std::to_string(o.num_threads)
                            + "; expected 0 (all cores) or more");
    }
};

} // namespace crest
