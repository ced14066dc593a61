// The ld.so.cache cache: what the in-container ldconfig run of a glibc image produced, kept
// in the state root (<root>/.ldconfig-cache/<key>, root-only) and written into the next
// container whose ldconfig would read exactly the same inputs, instead of running ldconfig
// again (a whole ldconfig run per create; docs/gpu.md). The key is everything ldconfig reads: its binary and
// arguments, the image's ld.so.conf and the drop-ins it includes (with berth's own), every
// directory it scans (the system ones, the configured ones, their hwcap subdirectories) with
// each entry's name, type, inode, size and mtime (a symlink also by its target and the
// identity of the file it reaches inside the rootfs), the identity of each host file berth
// binds there, and the aux-cache. Anything the key cannot describe (another include, a
// mount of the config over a scanned directory) makes the container uncacheable: ldconfig
// runs as before. A cached value is trusted only after it is checked against the key's
// listing: each entry must name a file that is in a scanned directory under its own soname,
// which is what the loader would find by searching those directories anyway.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "devices/edits.h"

namespace berth::devices::nvidia {

struct LdconfigKey {
  std::string text;    // the inputs, one per line (--debug, tests)
  std::string digest;  // sha256 of text, hex: the entry's file name
  // In-root directory (as scanned, and as resolved) → the names ldconfig may record there.
  std::map<std::string, std::set<std::string>> names;
};

// The key of the one ldconfig run in `e` for the rootfs; an error says why it cannot be
// cached (no run, several runs, an include berth does not follow, a mount over its inputs).
// `mounts` are the spec's: one over anything ldconfig reads makes the container uncacheable.
Result<LdconfigKey> ldconfig_key(const std::string& rootfs, const Edits& e, const std::vector<spec::Mount>& mounts);

// The checks every cached value passes before use and before it is stored: a "1.1" cache
// whose every entry is <scanned dir>/<soname> for a name the listing holds.
Status check_ldcache_value(std::string_view bytes, const LdconfigKey& key);

// What create needs after the init ran ldconfig to store its result.
struct LdconfigFill {
  std::string state_root, rootfs;
  std::vector<spec::Mount> mounts;  // the spec's, to recompute the key
  Edits edits;      // the edits the key was made from (the ldconfig run still in them)
  std::string digest;
};

// On a hit, replaces the ldconfig run in `e` by the cached /etc/ld.so.cache and returns
// nullopt; on a miss returns what fill_ldconfig_cache needs. Never fails create: an
// uncacheable container or an unusable cache only costs the ldconfig run.
std::optional<LdconfigFill> use_ldconfig_cache(Edits& e, const spec::Spec& spec, const std::string& rootfs,
                                               const std::string& state_root);

// After the init ran ldconfig: recomputes the key (nothing it reads may have changed, or
// ldconfig changed the image itself), reads <rootfs>/etc/ld.so.cache without following a
// symlink, checks it and stores it. Failures are logged at debug level only.
void fill_ldconfig_cache(const LdconfigFill& f);

// The entry file: a header binding it to its key and payload hash, then the payload.
std::string encode_ldcache_entry(const std::string& digest, std::string_view payload);
Result<std::string> decode_ldcache_entry(const std::string& digest, std::string_view bytes);

inline std::string ldconfig_cache_dir(const std::string& state_root) { return state_root + "/.ldconfig-cache"; }

}  // namespace berth::devices::nvidia
