// Memory for one generated kernel, owned apart from the generator that
// wrote it: the generator lives only for the generation (its object and
// label tables are some kilobytes otherwise kept for as long as the
// kernel), and the code stays here. While it works, the generator object
// sits in the buffer's first page, ahead of the code (generate_with): a
// fresh process then touches one new page for both, not also a new page
// of stack, each page fault costing 10-25 us in a VM.
#pragma once

#include <cstddef>

namespace crest::impl::jit {

class code_buffer {
public:
    // The most code one kernel may take; the generator fails beyond it.
    // The largest today, a bf16/f16 vertical tile kernel prefetching the
    // next pass's rows with its skewed blocks in both modes, takes 61 KB
    // since session 21's L1 prefetches (JitCodegen tests every config).
    // Only the pages written are ever touched.
    static constexpr size_t capacity = 128 * 1024;

    code_buffer() = default;
    ~code_buffer();
    code_buffer(const code_buffer &) = delete;
    code_buffer &operator=(const code_buffer &) = delete;

    // Maps `capacity` fresh read+write bytes (page aligned). Throws
    // std::bad_alloc.
    void *map();
    // Makes them read+execute, never writable again. Throws
    // std::runtime_error when the system refuses.
    void seal();
    void *data() const { return data_; }

private:
    void *data_ = nullptr;
};

} // namespace crest::impl::jit
