// crest's thread pool: a oneTBB task arena owned by the engine. Kernels split
// memory-bound loops into a fixed number of static chunks, one per thread, so
// that no two threads write the same cache line of an output.
#pragma once

#include <cstdint>
#include <memory>

namespace crest::impl {

class thread_pool {
public:
    // num_threads <= 0: every core the process may use.
    explicit thread_pool(int num_threads);
    ~thread_pool();
    thread_pool(const thread_pool &) = delete;
    thread_pool &operator=(const thread_pool &) = delete;

    int size() const { return size_; }

    // Calls body(i) for i in [0, n) inside the arena, statically partitioned.
    // Runs inline when n <= 1 or the pool has one thread. Blocks until done.
    template <typename F>
    void parallel_for(int64_t n, const F &body) const {
        if (n <= 0) return;
        if (n == 1 || size_ == 1) {
            for (int64_t i = 0; i < n; ++i) body(i);
            return;
        }
        run(n, &invoke<F>, &body);
    }

private:
    using trampoline = void (*)(const void *ctx, int64_t i);
    template <typename F>
    static void invoke(const void *ctx, int64_t i) {
        (*static_cast<const F *>(ctx))(i);
    }
    void run(int64_t n, trampoline fn, const void *ctx) const;

    int size_;
    struct arena;
    std::unique_ptr<arena> arena_;
};

} // namespace crest::impl
