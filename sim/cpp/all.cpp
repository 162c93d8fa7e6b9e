// The extension is compiled as one translation unit (setup.py): one compiler run of ~10 s
// instead of one per file, and the engine loop can inline across files. Every source file of
// sim/cpp is listed here; each primitive family keeps its file-local classes in a namespace
// named after the family (fastsim::stream, fastsim::join, ...) so that they cannot collide.
#include "engine.cpp"
#include "graph.cpp"
#include "prims_stream.cpp"
#include "prims_join.cpp"
#include "prims_locate.cpp"
#include "prims_compute.cpp"
#include "prims_spacc.cpp"
#include "prims_crd.cpp"
#include "prims_write.cpp"
#include "module.cpp"
