// The driver-file discovery cached per driver version in the state root
// (<root>/.nvidia-<version>-<hash>.json, a file, so `list` never sees it): the ld.so.cache
// walk and the path resolution run once per driver install; the entry is rebuilt when the
// driver root's ld.so.cache changes or a cached file vanished. The CUDA version is cached
// only as an answer, with the identity (dev, inode, size, mtime) of the libcuda that gave
// it: a failed probe is retried on the next create, a replaced libcuda is asked again.
#pragma once

#include <string>

#include "berth/result.h"
#include "devices/config.h"
#include "devices/nvidia/driver_files.h"
#include "devices/nvidia/rootdir.h"

namespace berth::devices::nvidia {

// state_root "" (or cfg.discovery_cache false) disables the cache.
Result<DriverFiles> cached_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version,
                                        const std::string& state_root);

// (De)serialization, exposed for tests.
std::string serialize_driver_files(const DriverFiles& f, const std::string& key, const std::string& stamp);
Result<DriverFiles> parse_driver_files(const std::string& text, const std::string& key, const std::string& stamp);

}  // namespace berth::devices::nvidia
