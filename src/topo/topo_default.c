/* topo/topo_default.c: the built-in default machine, embedded byte for byte
 * from topologies/default.yaml at build time so the binary and the file
 * cannot drift (a unit test compares them).
 *
 * The assembler's .incbin pulls the file in; CUBESIM_SOURCE_DIR (set by
 * CMake for every source) locates it. A NUL byte follows the text so it is
 * also a C string. The build system does not see this dependency by itself:
 * CMakeLists.txt adds topologies/default.yaml to this file's
 * OBJECT_DEPENDS so an edit of the YAML recompiles it. */
#include "topo/topo.h"

#include <stddef.h>

#ifndef CUBESIM_SOURCE_DIR
#error "CUBESIM_SOURCE_DIR must name the source tree (CMake defines it)"
#endif

__asm__(".pushsection .rodata.cubesim_topo_default, \"a\", %progbits\n"
        ".balign 16\n"
        ".globl cubesim_topo_default_start\n"
        ".hidden cubesim_topo_default_start\n"
        ".globl cubesim_topo_default_end\n"
        ".hidden cubesim_topo_default_end\n"
        "cubesim_topo_default_start:\n"
        ".incbin \"" CUBESIM_SOURCE_DIR "/topologies/default.yaml\"\n"
        "cubesim_topo_default_end:\n"
        ".byte 0\n"
        ".popsection\n");

extern const char cubesim_topo_default_start[];
extern const char cubesim_topo_default_end[];

const char *topo_default_yaml(size_t *len)
{
        if (len)
                *len = (size_t)(cubesim_topo_default_end - cubesim_topo_default_start);
        return cubesim_topo_default_start;
}
