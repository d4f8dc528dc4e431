// The JitReduce fixture (every ISA the machine runs x every dtype, the
// ref backend as oracle) and plan_on_two, shared by the sweeps in
// jit_reduce_test.cpp (which instantiates the suite) and
// jit_small_dims_test.cpp.
#pragma once

#include "tests/jit/jit_test_util.hpp"

#include <string>
#include <vector>

namespace crest::impl::jit::test {

struct param {
    const char *isa;
    data_type dt;
};

inline std::vector<param> all_params() {
    std::vector<param> r;
    for (const char *isa : runnable_isas())
        for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
            r.push_back({isa, dt});
    return r;
}

class JitReduce : public ::testing::TestWithParam<param> {
protected:
    void SetUp() override { set_max_isa_for_testing(GetParam().isa); }
    void TearDown() override { set_max_isa_for_testing(nullptr); }
    data_type dt() const { return GetParam().dt; }
    split_above_64k split_;
    std::string run(const reduce_problem &p, const planting &pl = {}) {
        const std::string name = check(p, pl, pool2(), seed_++);
        EXPECT_NE(name.find(GetParam().isa), std::string::npos) << name;
        return name;
    }
    // p on one thread and on two, clean, then with a NaN of either sign at
    // each of `at` (flat src indices).
    void run_with_nans(const reduce_problem &p, std::initializer_list<size_t> at) {
        const thread_pool one(1);
        check(p, {}, one, seed_++);
        run(p);
        for (size_t i : at)
            for (bool neg : {false, true}) {
                planting pl;
                pl.nan_at.push_back(i);
                pl.nan_bits = qnan_bits(dt()) | (neg ? inf_bits(dt(), true) : 0);
                run(p, pl);
                check(p, pl, one, seed_++);
            }
    }
    uint32_t seed_ = 1;
};

// The plan of p on a pool of 2 threads (a failure to plan fails the test),
// for this machine's ISA or the one given (planned, never run).
inline plan plan_on_two(const reduce_problem &p, isa_t isa = max_isa()) {
    plan P;
    std::string why;
    EXPECT_TRUE(make_plan(p, isa, 2, &P, &why)) << why;
    return P;
}

} // namespace crest::impl::jit::test
