// Umbrella header of crest's public C++ API.
#pragma once

#include "crest/engine.hpp"
#include "crest/error.hpp"
#include "crest/graph.hpp"
#include "crest/logical_tensor.hpp"
#include "crest/op.hpp"
