// The shape of a permute tree (jit_generator::permute_tree_group, in
// permute_tree.cpp): outputs of few elements each, whose elements lie
// in windows of at most two vectors, reduced without leaving the
// registers. A window is read as the vector at its start and the vector
// that ends it; a first step of two two-source permutes pairs up each
// output's elements (p0 partials an output), then merges halve the
// partials while doubling the outputs a vector holds, until one vector
// holds `lanes` outputs, window after window in lane order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace crest::impl::jit {

struct permute_tree {
    int lanes = 0;  // elements a vector holds
    int n = 0;      // elements an output takes
    int np = 0;     // n padded to a power of two (at least 2)
    int p0 = 0;     // partials an output has after the first step: np / 2
    int r0 = 0;     // outputs a window has lanes for: lanes / p0
    int outs = 0;   // outputs a window holds (<= r0); the lanes past them
                    // repeat its last output (junk, never stored)
    int span = 0;   // elements a window spans, in (lanes, 2 * lanes]
    // Output r's element e (r < outs, e < n) as an element of the window.
    std::function<int(int, int)> at;

    // Rows of n elements one after another, an output each (the inner
    // tiny rows): r0 rows a window.
    static permute_tree rows(int n, int lanes);
    // Slices of `rows` rows of `cols` columns one after another, an
    // output a column (NCHW reducing H of 7x7 maps): a slice a window.
    static permute_tree columns(int rows, int cols, int lanes);
    // Whether columns(rows, cols, lanes) exists: the slice spans more
    // than a vector and at most two, and its columns fit a window's lanes.
    static bool columns_fit(int rows, int cols, int lanes);

    // The window's second vector starts this many elements in.
    int second_at() const { return span - lanes; }
    // A window's element x as an index into (first vector, second vector).
    int index_of(int x) const { return x < lanes ? x : lanes + x - second_at(); }
    // Windows a vector of outputs takes.
    int windows() const { return p0; }
    // The permute tables: the first step's even and odd partials, then per
    // merge (p partials an output -> p / 2) its even and odd ones. An
    // output's elements past n repeat its last one (a max is idempotent).
    std::vector<std::vector<uint32_t>> tables() const;
    // Lane i of the packed vector: the i-th real output of the tree's
    // vector (outs < r0: the junk lanes dropped; lanes past the real
    // outputs repeat the last).
    std::vector<uint32_t> pack_table() const;
    // Real outputs a vector holds.
    int outputs() const { return p0 * outs; }
};

} // namespace crest::impl::jit
