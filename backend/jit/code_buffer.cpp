#include "backend/jit/code_buffer.hpp"

#include <sys/mman.h>

#include <new>

namespace crest::impl::jit {

void *code_buffer::map() {
    void *p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
            -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = p;
    return p;
}

code_buffer::~code_buffer() {
    if (data_) ::munmap(data_, capacity);
}

} // namespace crest::impl::jit
