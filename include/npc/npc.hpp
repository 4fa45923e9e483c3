#pragma once
/// \file npc.hpp
/// The npc C++ API: `#include <npc/npc.hpp>`. NumPy's names in namespace npc.
#include "npc/creation.hpp"
#include "npc/dtype.hpp"
#include "npc/errors.hpp"
#include "npc/indexing.hpp"
#include "npc/ndarray.hpp"
#include "npc/shape.hpp"
#include "npc/sorting.hpp"
