// What a container asks of the NVIDIA module: NVIDIA_VISIBLE_DEVICES (every value form),
// NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_* / CUDA_VERSION / NVIDIA_DISABLE_REQUIRE,
// NVIDIA_MIG_CONFIG_DEVICES / NVIDIA_MIG_MONITOR_DEVICES (privileged only),
// NVIDIA_IMEX_CHANNELS from process.env; the toolkit's volume-mount form
// (/var/run/nvidia-container-devices/<id>); and the annotations org.berth.gpus and
// org.berth.gpus.capabilities. Pure parsing: nothing here looks at the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::devices::nvidia {

inline constexpr const char* kGpusAnnotation = "org.berth.gpus";
inline constexpr const char* kCapabilitiesAnnotation = "org.berth.gpus.capabilities";
inline constexpr const char* kVolumeMountRoot = "/var/run/nvidia-container-devices";

enum Capability : uint32_t {
  kUtility = 1u << 0,
  kCompute = 1u << 1,
  kVideo = 1u << 2,
  kGraphics = 1u << 3,
  kDisplay = 1u << 4,
  kNgx = 1u << 5,
  kCompat32 = 1u << 6,
  kAllCapabilities = (1u << 7) - 1,
};

// "utility,compute", "all"; `what` names the source in errors.
Result<uint32_t> parse_capabilities(std::string_view value, std::string_view what);
std::string capabilities_text(uint32_t caps);

// Where a request came from. Env requests are implicit (CUDA images carry
// NVIDIA_VISIBLE_DEVICES=all); the others were made on purpose.
enum class Origin { kEnv, kVolumeMounts, kAnnotation, kCdi };

struct Request {
  bool wanted = false;
  Origin origin = Origin::kEnv;
  std::string source;                 // "NVIDIA_VISIBLE_DEVICES=all", for messages
  bool driver_only = false;           // "none": driver files and control nodes, no GPU
  std::vector<std::string> devices;   // "all", indexes, UUIDs, i:j, bus ids
  uint32_t caps = kUtility | kCompute;
  std::vector<std::string> requirements;  // NVIDIA_REQUIRE_* values and CUDA_VERSION's implied one
  bool disable_require = false;
  // The variable that states a CUDA requirement ("NVIDIA_REQUIRE_CUDA=cuda>=12.4 ...", or
  // "CUDA_VERSION=12.4.1"); "" when the image states none.
  std::string cuda_requirement;
  std::vector<std::string> mig_config;    // NVIDIA_MIG_CONFIG_DEVICES
  std::vector<std::string> mig_monitor;   // NVIDIA_MIG_MONITOR_DEVICES
  std::vector<std::string> imex_channels; // "all" or channel numbers
  // A second source naming GPUs beside this one (NVIDIA_VISIBLE_DEVICES or org.berth.gpus
  // beside CDI nvidia.com/gpu names): merged when both select the same GPUs, an error
  // naming both otherwise.
  struct Also {
    std::string source;
    std::vector<std::string> devices;
  };
  std::optional<Also> also;

  bool explicit_request() const { return origin != Origin::kEnv; }
};

struct RequestOptions {
  std::string default_capabilities = "utility,compute";
  bool accept_volume_mounts = true;
};

// The device-list grammar shared by every source: nullopt for unset, "", "void" (no
// request); {"none"} stays as is for the caller; otherwise the trimmed comma list.
std::optional<std::vector<std::string>> parse_device_list(std::optional<std::string_view> value);

// Last occurrence wins, as the toolkit reads the environment.
std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name);

// CAP_SYS_ADMIN in the bounding set, as nvidia-container-toolkit decides "privileged".
bool is_privileged(const spec::Spec& spec);

Result<Request> parse_request(const spec::Spec& spec, const RequestOptions& opts);

// Requirements alone (NVIDIA_REQUIRE_*, CUDA_VERSION, NVIDIA_DISABLE_REQUIRE) from an env.
void parse_requirements(const std::vector<std::string>& env, Request& r);

}  // namespace berth::devices::nvidia
