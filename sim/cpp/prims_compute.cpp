// The compute family (sim/prims_compute.py): not ported yet; the builder runs graphs using these
// primitives on the Python engine until they are registered here.
#include "registry.hpp"

namespace fastsim {

void register_compute(Registry&) {}

}  // namespace fastsim
