// Generated and mutated graph files for the robustness tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace crest {
namespace robustness {

// splitmix64: the same numbers on every platform (std distributions are not).
class rng {
public:
    explicit rng(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // 0 <= x < n (n > 0).
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
    int64_t between(int64_t lo, int64_t hi) {
        return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
    }
    bool percent(int p) { return below(100) < static_cast<uint64_t>(p); }
    template <typename T>
    const T &pick(const std::vector<T> &v) { return v[below(v.size())]; }

private:
    uint64_t state_;
};

// Paths of the case files that exist (repo copy first, then shared/cases).
std::vector<std::string> case_files();

// A ReduceMax (or ArgMax) graph with a chain of post-ops, small shapes and
// dense or permuted strides; valid unless a mutation breaks it.
nlohmann::json generate_graph(rng &r, bool valid);

// The text of mutation case `seed`: a base document (one of docs or a
// generated graph), mutated structurally and/or as text.
std::string mutated_case(uint64_t seed, const std::vector<nlohmann::json> &docs);

} // namespace robustness
} // namespace crest
