#include "src/threading.hpp"

#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace crest::impl {

struct thread_pool::arena {
    tbb::task_arena a;
    explicit arena(int n) : a(n) {}
};

thread_pool::thread_pool(int num_threads) {
    int cores = tbb::info::default_concurrency();
    if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
    if (cores <= 0) cores = 1;
    size_ = num_threads > 0 ? num_threads : cores;
    arena_ = std::make_unique<arena>(size_);
}

thread_pool::~thread_pool() = default;

void thread_pool::run(int64_t n, trampoline fn, const void *ctx) const {
    arena_->a.execute([&] {
        tbb::parallel_for(
                tbb::blocked_range<int64_t>(0, n, 1),
                [&](const tbb::blocked_range<int64_t> &r) {
                    for (int64_t i = r.begin(); i < r.end(); ++i) fn(ctx, i);
                },
                tbb::static_partitioner());
    });
}

} // namespace crest::impl
