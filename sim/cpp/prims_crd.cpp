// The crd family (sim/prims_crd.py): not ported yet; the builder runs graphs using these
// primitives on the Python engine until they are registered here.
#include "registry.hpp"

namespace fastsim {

void register_crd(Registry&) {}

}  // namespace fastsim
