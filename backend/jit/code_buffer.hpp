// Memory for one generated kernel, owned apart from the generator that
// wrote it: the generator lives on the stack for the generation only (its
// object and label tables are some kilobytes of heap otherwise, kept for
// as long as the kernel), and the code stays here.
#pragma once

#include <cstddef>

namespace crest::impl::jit {

class code_buffer {
public:
    // The most code one kernel may take; the generator fails beyond it.
    static constexpr size_t capacity = 32 * 1024;

    code_buffer() = default;
    ~code_buffer();
    code_buffer(const code_buffer &) = delete;
    code_buffer &operator=(const code_buffer &) = delete;

    // Maps `capacity` fresh read+write bytes (page aligned); the generator
    // makes them read+execute when done. Throws std::bad_alloc.
    void *map();
    void *data() const { return data_; }

private:
    void *data_ = nullptr;
};

} // namespace crest::impl::jit
