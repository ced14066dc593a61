// The few ELF facts berth needs, read with pread from an fd and every size checked (the
// files may come from an image): whether a program is static (no PT_INTERP: the host
// ldconfig must not load the image's libc), and the payload of a named note section
// (CUDA's `.note.cuda.fwd_compatibility` in compat libcuda).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "berth/result.h"

namespace berth::devices::nvidia {

struct ElfInfo {
  bool is_64 = false;
  uint16_t machine = 0;
  bool has_interp = false;  // a PT_INTERP program header: dynamically linked
};

// Fails when the file is not a little-endian ELF.
Result<ElfInfo> read_elf_info(int fd);

// The descriptor of the first note owned by `owner` in the section named `section`
// (trailing NULs removed); nullopt when there is no such section or note.
Result<std::optional<std::string>> read_elf_note(int fd, std::string_view section, std::string_view owner);

}  // namespace berth::devices::nvidia
