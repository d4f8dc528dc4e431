#include "backend/jit/code_buffer.hpp"

#include <sys/mman.h>

#include <new>
#include <stdexcept>

namespace crest::impl::jit {

void *code_buffer::map() {
    void *p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
            -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = p;
    return p;
}

void code_buffer::seal() {
    if (::mprotect(data_, capacity, PROT_READ | PROT_EXEC) != 0)
        throw std::runtime_error("crest: cannot make JIT code executable (mprotect)");
}

code_buffer::~code_buffer() {
    if (data_) ::munmap(data_, capacity);
}

} // namespace crest::impl::jit
