// Where the tests find the shared case files (reducemax.json, max.json, ...):
// the repo copy in benchdnn_inputs/graph first, then shared/cases beside the
// clone. A test target names the folders with compile definitions:
//
//   target_compile_definitions(t PRIVATE
//     CREST_CASES_DIR="${PROJECT_SOURCE_DIR}/benchdnn_inputs/graph"
//     CREST_SHARED_CASES="${PROJECT_SOURCE_DIR}/../shared/cases")
#pragma once

#include <fstream>
#include <string>

#if !defined(CREST_CASES_DIR) && !defined(CREST_SHARED_CASES)
#error "tests/case_files.hpp: define CREST_CASES_DIR and/or CREST_SHARED_CASES"
#endif

namespace crest::test {

// The path of case file `name` in the first folder that has it; "" when none
// does (the caller skips or reports).
inline std::string find_case_file(const std::string &name) {
    static const char *const dirs[] = {
#ifdef CREST_CASES_DIR
            CREST_CASES_DIR,
#endif
#ifdef CREST_SHARED_CASES
            CREST_SHARED_CASES,
#endif
    };
    for (const char *d : dirs) {
        std::string p = std::string(d) + "/" + name;
        if (std::ifstream(p).good()) return p;
    }
    return "";
}

} // namespace crest::test
