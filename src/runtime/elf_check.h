// A shared library checked before dlopen maps it. dlopen maps a file's segments as its program
// headers describe them, and a truncated file's missing pages fault when the loader first reads
// them (SIGBUS, not an error dlopen returns): a module copied half-way, or written by a compile
// that was killed, would crash the process that loads it.
#pragma once

#include <filesystem>

namespace orch::runtime {

/// Throws Error naming `path` unless it is a whole 64-bit ELF file: its program and section
/// header tables and every loadable segment lie inside it.
void check_elf_complete(const std::filesystem::path& path);

}  // namespace orch::runtime
