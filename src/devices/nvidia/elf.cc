// ELF header, program header and note-section reading (see elf.h). Only 64-bit
// little-endian files carry notes we look at; 32-bit files answer the static question.
#include "devices/nvidia/elf.h"

#include <elf.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace berth::devices::nvidia {
namespace {

constexpr size_t kMaxSections = 4096;
constexpr size_t kMaxProgramHeaders = 512;
constexpr size_t kMaxNoteSection = 64 * 1024;
constexpr size_t kMaxShstrtab = 1 << 20;

Status pread_all(int fd, void* buf, size_t n, uint64_t off) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Error::sys(errno, "read ELF");
    if (r == 0) return Error::generic("ELF file truncated");
    done += static_cast<size_t>(r);
  }
  return ok();
}

Result<Elf64_Ehdr> header64(int fd) {
  Elf64_Ehdr h;
  BERTH_TRY(pread_all(fd, &h, sizeof h, 0));
  return h;
}

template <class Phdr>
Result<bool> has_interp(int fd, uint64_t phoff, size_t phnum, size_t phentsize) {
  if (phnum > kMaxProgramHeaders || (phnum && phentsize != sizeof(Phdr))) return Error::generic("ELF: bad program headers");
  for (size_t i = 0; i < phnum; ++i) {
    Phdr p;
    BERTH_TRY(pread_all(fd, &p, sizeof p, phoff + i * sizeof p));
    if (p.p_type == PT_INTERP) return true;
  }
  return false;
}

std::optional<std::string> find_note(std::string_view d, std::string_view owner, size_t align) {
  auto pad = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
  size_t at = 0;
  while (at + 12 <= d.size()) {
    uint32_t namesz, descsz;
    std::memcpy(&namesz, d.data() + at, 4);
    std::memcpy(&descsz, d.data() + at + 4, 4);
    size_t name_at = at + 12;
    size_t desc_at = name_at + pad(namesz);
    if (namesz > d.size() || descsz > d.size() || desc_at + descsz > d.size()) return std::nullopt;
    std::string_view name = d.substr(name_at, namesz);
    while (!name.empty() && name.back() == '\0') name.remove_suffix(1);
    if (name == owner) {
      std::string desc(d.substr(desc_at, descsz));
      while (!desc.empty() && desc.back() == '\0') desc.pop_back();
      return desc;
    }
    at = desc_at + pad(descsz);
  }
  return std::nullopt;
}

}  // namespace

Result<ElfInfo> read_elf_info(int fd) {
  unsigned char ident[EI_NIDENT];
  BERTH_TRY(pread_all(fd, ident, sizeof ident, 0));
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_DATA] != ELFDATA2LSB) return Error::generic("not a little-endian ELF file");
  ElfInfo info;
  if (ident[EI_CLASS] == ELFCLASS64) {
    BERTH_ASSIGN(Elf64_Ehdr h, header64(fd));
    info.is_64 = true;
    info.machine = h.e_machine;
    BERTH_ASSIGN(info.has_interp, has_interp<Elf64_Phdr>(fd, h.e_phoff, h.e_phnum, h.e_phentsize));
  } else if (ident[EI_CLASS] == ELFCLASS32) {
    Elf32_Ehdr h;
    BERTH_TRY(pread_all(fd, &h, sizeof h, 0));
    info.machine = h.e_machine;
    BERTH_ASSIGN(info.has_interp, has_interp<Elf32_Phdr>(fd, h.e_phoff, h.e_phnum, h.e_phentsize));
  } else {
    return Error::generic("unknown ELF class");
  }
  return info;
}

Result<std::optional<std::string>> read_elf_note(int fd, std::string_view section, std::string_view owner) {
  BERTH_ASSIGN(ElfInfo info, read_elf_info(fd));
  if (!info.is_64) return std::optional<std::string>();
  BERTH_ASSIGN(Elf64_Ehdr h, header64(fd));
  if (h.e_shnum == 0 || h.e_shnum > kMaxSections || h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shstrndx >= h.e_shnum)
    return std::optional<std::string>();
  std::vector<Elf64_Shdr> sh(h.e_shnum);
  BERTH_TRY(pread_all(fd, sh.data(), sh.size() * sizeof(Elf64_Shdr), h.e_shoff));
  const Elf64_Shdr& strs = sh[h.e_shstrndx];
  if (strs.sh_size > kMaxShstrtab) return Error::generic("ELF: section name table too large");
  std::string names(strs.sh_size, '\0');
  BERTH_TRY(pread_all(fd, names.data(), names.size(), strs.sh_offset));
  for (const auto& s : sh) {
    if (s.sh_name >= names.size() || std::string_view(names.c_str() + s.sh_name) != section) continue;
    if (s.sh_type == SHT_NOBITS || s.sh_size > kMaxNoteSection) return Error::generic("ELF: bad note section " + std::string(section));
    std::string data(s.sh_size, '\0');
    BERTH_TRY(pread_all(fd, data.data(), data.size(), s.sh_offset));
    return find_note(data, owner, s.sh_addralign == 8 ? 8 : 4);
  }
  return std::optional<std::string>();
}

}  // namespace berth::devices::nvidia
