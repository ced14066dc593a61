// Container Device Interface spec files, versions 0.3.0 to 1.1.0: the model (cdiVersion,
// kind, annotations, devices[].{name, annotations, containerEdits}, spec-wide
// containerEdits; containerEdits = env, deviceNodes, mounts, hooks, additionalGids,
// intelRdt, netDevices), parsing from JSON or YAML, validation, and fully qualified device
// names (vendor.com/class=name).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"

namespace berth::devices::cdi {

struct DeviceNode {
  std::string path, host_path, type;
  std::optional<int64_t> major, minor;
  std::optional<uint32_t> file_mode;
  std::string permissions;
  std::optional<uint32_t> uid, gid;
};

struct Mount {
  std::string host_path, container_path, type;
  std::vector<std::string> options;
};

struct Hook {
  std::string hook_name, path;
  std::vector<std::string> args, env;
  std::optional<int64_t> timeout;
};

struct IntelRdt {
  std::string clos_id, l3_cache_schema, mem_bw_schema;
  std::vector<std::string> schemata;
  bool enable_monitoring = false;
};

struct NetDevice {
  std::string host_interface_name, name;
};

struct ContainerEdits {
  std::vector<std::string> env;
  std::vector<DeviceNode> device_nodes;
  std::vector<NetDevice> net_devices;
  std::vector<Hook> hooks;
  std::vector<Mount> mounts;
  std::optional<IntelRdt> intel_rdt;
  std::vector<uint32_t> additional_gids;
};

struct Device {
  std::string name;
  std::map<std::string, std::string> annotations;
  ContainerEdits container_edits;
};

struct Spec {
  std::string cdi_version, kind;
  std::map<std::string, std::string> annotations;
  std::vector<Device> devices;
  ContainerEdits container_edits;
  std::string source;  // the file
};

// YAML when the source ends in .yaml/.yml, else JSON. Validated.
Result<Spec> parse_spec(std::string_view text, const std::string& source);

struct QualifiedName {
  std::string kind;    // vendor.com/class
  std::string device;  // name
  std::string text() const { return kind + "=" + device; }
};
Result<QualifiedName> parse_qualified_name(std::string_view name);

// Every device named by cdi.k8s.io/* annotations, in annotation-key order, without repeats.
Result<std::vector<QualifiedName>> requested_devices(const std::map<std::string, std::string>& annotations);

inline constexpr const char* kAnnotationPrefix = "cdi.k8s.io/";

}  // namespace berth::devices::cdi
