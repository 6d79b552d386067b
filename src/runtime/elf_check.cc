#include "runtime/elf_check.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "ir/error.h"

namespace orch::runtime {
namespace {

// Throws unless [offset, offset + count * entry) lies in the first `size` bytes of `file`.
void check_inside(const std::string& file, std::string_view what, uint64_t offset, uint64_t count,
                  uint64_t entry, uint64_t size) {
  bool ok = offset <= size && (entry == 0 || count <= (size - offset) / entry);
  check(ok, "{}: truncated or corrupted: {} end at byte {}, the file has {}", file, what,
        offset + count * entry, size);
}

}  // namespace

void check_elf_complete(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "{}: cannot open the kernel library", file);
  const uint64_t size = std::filesystem::file_size(path);
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  check(in.gcount() == sizeof header && std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
            header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_phentsize == sizeof(Elf64_Phdr),
        "{}: not a 64-bit ELF library ({} bytes)", file, size);
  check_inside(file, "its program headers", header.e_phoff, header.e_phnum, header.e_phentsize,
               size);
  check_inside(file, "its section headers", header.e_shoff, header.e_shnum, header.e_shentsize,
               size);
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  in.seekg(static_cast<std::streamoff>(header.e_phoff));
  in.read(reinterpret_cast<char*>(segments.data()),
          static_cast<std::streamsize>(segments.size() * sizeof(Elf64_Phdr)));
  check(in.good(), "{}: cannot read its program headers", file);
  for (const Elf64_Phdr& s : segments)
    if (s.p_type == PT_LOAD) check_inside(file, "its segments", s.p_offset, 1, s.p_filesz, size);
}

}  // namespace orch::runtime
