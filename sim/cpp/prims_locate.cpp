// The locate family (sim/prims_locate.py): not ported yet; the builder runs graphs using these
// primitives on the Python engine until they are registered here.
#include "registry.hpp"

namespace fastsim {

void register_locate(Registry&) {}

}  // namespace fastsim
