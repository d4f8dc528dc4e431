#include "backend/jit/kernel_cache.hpp"

#include <mutex>
#include <unordered_map>

#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

namespace {
struct cache {
    std::mutex mu;
    std::unordered_map<kernel_config, std::shared_ptr<const generated_code>,
            kernel_config_hash>
            map;
};
cache &the_cache() {
    static cache *c = new cache;  // never destroyed: kernels may outlive main
    return *c;
}
} // namespace

std::shared_ptr<const generated_code> get_code(const kernel_config &cfg) {
    cache &c = the_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.map.find(cfg);
    if (it != c.map.end()) return it->second;
    auto g = std::make_shared<generated_code>();
    g->cfg = cfg;
    g->fn = cfg.family == family_t::inner ? generate_inner(cfg, g->code)
                                          : generate_vertical(cfg, g->code);
    // The code sets rax on every return (gen_vertical_reg.hpp, status_exit);
    // void (*)() is the cast GCC takes between function types.
    if (cfg.block_batch || wide_columns(cfg))
        g->status_fn = reinterpret_cast<jit_status_fn>(reinterpret_cast<void (*)()>(g->fn));
    if (cfg.block_batch) g->batch_most = fixed_batch_most(cfg);
    c.map.emplace(cfg, g);
    return g;
}

size_t code_cache_size() {
    cache &c = the_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    return c.map.size();
}

} // namespace crest::impl::jit
